// The `[[ssh]]` targets the hub dials, by name: started at start-up and by a reload, stopped by a
// reload or at shutdown. Each dialled link runs as a session bound to the target's name. On NATS
// every hub may list the same entry: a hub dials it only while no other hub holds the host's link,
// so one link runs and another hub takes over once the holder's claim has lapsed.

import type { Logger } from 'pino';
import type { SshTarget } from '../config/config.js';
import type { FleetHosts } from '../store/fleet-store.js';
import type { LinkSessions } from './sessions.js';
import { dialSsh, type SshDialer, type SshTuning } from './ssh.js';

export class SshDialers {
  private readonly dialers = new Map<string, SshDialer>();

  constructor(
    private readonly o: {
      sessions: LinkSessions;
      store: Pick<FleetHosts, 'unreachable'>;
      logger: Logger;
      tuning?: SshTuning;
      /** Why this hub must not dial `name` now (another hub holds it); null when it may. */
      mayDial?: (name: string) => string | null;
    },
  ) {}

  dial(target: SshTarget): void {
    const may = this.o.mayDial;
    this.dialers.set(
      target.name,
      dialSsh({
        ...this.o.tuning,
        target,
        logger: this.o.logger,
        onLink: (link) => this.o.sessions.attach(link, { transport: 'ssh', host: target.name }),
        onDown: (reason) => this.o.store.unreachable(target.name, reason),
        ...(may ? { mayDial: () => may(target.name) } : {}),
      }),
    );
  }

  /** Stop dialling `name` and close its link; resolves once its socket is gone. */
  async stop(name: string, reason: string): Promise<void> {
    const d = this.dialers.get(name);
    this.dialers.delete(name);
    await d?.stop(reason);
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.dialers.values()].map((d) => d.stop()));
  }
}
