// The hub's link sessions, whatever carries them: one live link per host, the newer link
// replacing one that has gone quiet, and the links a reload may have to end because the token
// that opened them was withdrawn.

import type { Logger } from 'pino';
import type { Transport } from '../../shared/fleet.js';
import type { FrameLink } from '../../shared/link.js';
import type { HubMetrics } from '../metrics.js';
import type { FleetIntake } from '../store/fleet-store.js';
import { LinkSession, type LinkSessionOptions } from './session.js';

export interface LinkSessionsOptions {
  store: FleetIntake;
  metrics: HubMetrics;
  logger: Logger;
  heartbeatMs: number;
  deadAfterMs: number;
  clock: () => number;
  pendingSnapshotMaxBytes?: number;
  onNotify: NonNullable<LinkSessionOptions['onNotify']>;
  admitNotify: NonNullable<LinkSessionOptions['admitNotify']>;
  fleetHubs?: LinkSessionOptions['fleetHubs'];
  /** Asked after this hub's own check: a reason refuses the link (another hub holds the host). */
  admitHost?: (host: string) => string | null;
}

export class LinkSessions {
  /** The session publishing for each host. */
  private readonly byHost = new Map<string, LinkSession>();
  private readonly all = new Set<LinkSession>();
  /** Links opened with a collector token, by the host it binds. */
  private readonly byToken = new Map<LinkSession, string>();

  constructor(private readonly o: LinkSessionsOptions) {}

  /** Run the protocol over a link whose host binding is already known (token or config). */
  attach(link: FrameLink, at: { transport: Transport; host: string }): LinkSession {
    const { heartbeatMs } = this.o;
    const session = new LinkSession({
      link,
      store: this.o.store,
      metrics: this.o.metrics,
      logger: this.o.logger,
      transport: at.transport,
      boundHost: at.host,
      heartbeatMs,
      deadAfterMs: this.o.deadAfterMs,
      clock: this.o.clock,
      pendingSnapshotMaxBytes: this.o.pendingSnapshotMaxBytes,
      rebindHost: at.transport !== 'ws',
      // One live link per host: a second collector is refused rather than taking turns with the
      // first. A link that has missed a heartbeat is likely gone and may be replaced.
      admit: (s) => {
        const prior = this.byHost.get(s.host);
        if (!prior || prior === s || !prior.isOpen || prior.silentMs > heartbeatMs * 1.5) return this.o.admitHost?.(s.host) ?? null;
        return `another collector already publishes for ${s.host} over a live link; this one is refused until that link ends`;
      },
      onHello: (s) => {
        const prior = this.byHost.get(s.host);
        this.byHost.set(s.host, s);
        if (prior && prior !== s) prior.close('replaced by a newer link for this host');
      },
      onEnd: (s) => {
        this.all.delete(s);
        if (this.byHost.get(s.host) === s) this.byHost.delete(s.host);
      },
      onNotify: this.o.onNotify,
      admitNotify: this.o.admitNotify,
      fleetHubs: this.o.fleetHubs,
    });
    this.all.add(session);
    return session;
  }

  /** The open session publishing for `host`, if any. */
  session(host: string): LinkSession | undefined {
    return this.byHost.get(host);
  }

  /** The session was opened with `host`'s collector token; it is forgotten once `onGone` fires. */
  bindToToken(session: LinkSession, host: string, onGone: (cb: () => void) => void): void {
    this.byToken.set(session, host);
    onGone(() => this.byToken.delete(session));
  }

  /** End the links opened with `host`'s token (it was withdrawn); returns how many. */
  closeTokenLinks(host: string, reason: string): number {
    const mine = [...this.byToken].filter(([, h]) => h === host).map(([s]) => s);
    mine.forEach((s) => s.close(reason));
    return mine.length;
  }

  closeAll(reason: string): void {
    for (const s of [...this.all]) s.close(reason);
  }
}
