// One collector's session over one FrameLink, whatever carries it. The session owns the protocol:
// hello and its host binding, welcome/resume, applying frames to the store, heartbeats, the dead
// link timer, and act requests awaiting their results. Nothing a peer sends can throw out of here.

import type { Logger } from 'pino';
import type { Transport } from '../../shared/fleet.js';
import type { FrameLink } from '../../shared/link.js';
import {
  PROTOCOL_VERSION,
  decodeFrame,
  encodeFrame,
  type ActResult,
  type CollectorFrame,
  type FrameError,
  type HubFrame,
  type MuteResult,
  type PreviewResult,
} from '../../shared/protocol.js';
import type { HubMetrics } from '../metrics.js';
import type { ApplyOutcome, FleetIntake } from '../store/fleet-store.js';

export type ActRequest = Extract<HubFrame, { type: 'act' }>;
export type MuteRequest = Extract<HubFrame, { type: 'mute' }>;
export type PreviewRequest = Extract<HubFrame, { type: 'preview' }>;
export type HostRequest = ActRequest | MuteRequest | PreviewRequest;
/** The frame type that answers each request type. */
const ANSWER = { act: 'act_result', mute: 'mute_result', preview: 'preview_result' } as const;

/** How long a new link may take to say hello. */
export const HELLO_TIMEOUT_MS = 10_000;

/** Parts of one split snapshot a link may have outstanding; a real fleet's snapshot is far smaller. */
export const PENDING_SNAPSHOT_MAX_BYTES = 16 * 1024 * 1024;

export class ActTimeoutError extends Error {
  constructor(
    readonly id: string,
    readonly timeoutMs: number,
  ) {
    super(`no act_result for ${id} within ${timeoutMs} ms`);
  }
}

export class LinkClosedError extends Error {}

export interface LinkSessionOptions {
  link: FrameLink;
  store: FleetIntake;
  metrics: HubMetrics;
  logger: Logger;
  transport: Transport;
  /** The host name the credential (or the config, for ssh and embedded links) binds. */
  boundHost: string;
  heartbeatMs: number;
  /** Silence after which the link is dead: the host goes stale and the link is closed. */
  deadAfterMs: number;
  clock?: () => number;
  /**
   * The binding comes from the hub's own config (an `[[ssh]]` entry's name), not from a credential
   * the collector holds: a hello naming another host is rebound, and told so in the welcome.
   */
  rebindHost?: boolean;
  /** Bytes of incomplete snapshot parts held for this link before it is cut off. */
  pendingSnapshotMaxBytes?: number;
  /** Every hub of the fleet, named in the welcome (absent or empty: the key is not sent). */
  fleetHubs?: () => readonly string[];
  /** Asked before a hello is accepted: a reason refuses it (another live link holds the host). */
  admit?: (session: LinkSession) => string | null;
  /** Called after a hello is accepted, so the server can retire an older link of the same host. */
  onHello?: (session: LinkSession) => void;
  /** Called once when the session ends, for the server's bookkeeping. */
  onEnd?: (session: LinkSession) => void;
  /** A notification from this host; returns once it is durably recorded (throws if it cannot be). */
  onNotify?: (host: string, event: Extract<CollectorFrame, { type: 'notify' }>['event']) => void | Promise<void>;
  /** Asked for every notify frame before it is handled: a refusal drops it unacknowledged. */
  admitNotify?: (host: string) => null | { frame: FrameError | null };
}

type Phase = 'awaiting-hello' | 'open' | 'closed';

export class LinkSession {
  private phase: Phase = 'awaiting-hello';
  private lastHeardMs: number;
  private heartbeatTimer: NodeJS.Timeout | null = null;
  private deadTimer: NodeJS.Timeout | null = null;
  /** A fresh snapshot was asked for and has not completed: refusals meanwhile are expected. */
  private resyncAsked = false;
  /**
   * The last frame was refused and may have been a part of a split snapshot. A snapshot frame that
   * follows it may be that snapshot's tail, which must not be taken for the whole.
   */
  private refusedMaybeSnapshot = false;
  /** Text bytes of the parts of the snapshot being assembled (bounded: parts are held in memory). */
  private pendingSnapshotBytes = 0;
  private readonly pending = new Map<string, { answer: string; resolve: (r: never) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }>();
  private readonly clock: () => number;
  private readonly log: Logger;
  /** Identity handed to the store, so a replaced session cannot write or mark the host down. */
  private readonly owner = {};

  constructor(private readonly o: LinkSessionOptions) {
    this.clock = o.clock ?? Date.now;
    this.lastHeardMs = this.clock();
    this.log = o.logger.child({ host: o.boundHost, transport: o.transport });
    o.link.onMessage((text) => this.receive(text));
    o.link.onClose((reason) => this.ended(reason));
    // A peer that never says hello must not hold a connection forever either; but a collector
    // started by ssh on a busy machine may need seconds before its first word.
    this.armDeadTimer(Math.max(o.deadAfterMs, HELLO_TIMEOUT_MS));
  }

  get host(): string {
    return this.o.boundHost;
  }

  get isOpen(): boolean {
    return this.phase === 'open';
  }

  /** How long since the peer was last heard from. */
  get silentMs(): number {
    return this.clock() - this.lastHeardMs;
  }

  private acceptedCbs: (() => void)[] | null = [];
  private resumed = false;

  /** Called once, when the link has proved itself: its first complete snapshot (or resume) applied. */
  onAccepted(cb: () => void): void {
    if (this.acceptedCbs) this.acceptedCbs.push(cb);
    else cb();
  }

  private accepted(): void {
    const cbs = this.acceptedCbs;
    if (!cbs) return;
    this.acceptedCbs = null;
    cbs.forEach((cb) => cb());
  }

  /** Refuse the hello for a reason a retry will not fix; it shows on the host's status. */
  private refuseHello(code: FrameError['code'], message: string): void {
    this.o.store.noteRefusal(this.host, message);
    this.fail(code, message);
  }

  private send(frame: HubFrame): void {
    this.o.link.send(encodeFrame(frame));
  }

  private refuse(error: FrameError, level: 'warn' | 'info' = 'warn'): void {
    this.o.metrics.frameRejected(error.code);
    // The message never quotes frame content: a refused frame may carry a title.
    this.log[level]({ code: error.code, reason: error.message }, 'collector frame refused');
    this.send(error);
  }

  private fail(code: FrameError['code'], message: string): void {
    this.refuse({ type: 'error', code, message });
    this.close(message);
  }

  private receive(text: string): void {
    if (this.phase === 'closed') return;
    try {
      this.handle(text);
    } catch (e) {
      // A bug here must not take the hub down with it; the link is the casualty.
      this.log.error({ err: (e as Error).message }, 'collector frame handling failed');
      this.fail('internal', 'internal error while applying a frame');
    }
  }

  private handle(text: string): void {
    this.lastHeardMs = this.clock();
    // A notify frame over its budget is dropped before it costs a decode (a flood is cheap to send).
    const admitted = this.phase === 'open' && text.startsWith('{"type":"notify"');
    if (admitted && this.notifyRefused()) return;
    const d = decodeFrame<CollectorFrame>(text, 'from-collector');
    if (!d.ok) {
      if (this.phase === 'awaiting-hello') this.fail(d.error.code, `expected hello: ${d.error.message}`);
      else this.refusedFrame(d.error, d.type);
      return;
    }
    const f = d.frame;
    if (this.phase === 'awaiting-hello') {
      if (f.type !== 'hello') return this.fail('protocol', `expected hello first, got ${f.type}`);
      return this.hello(f);
    }
    this.o.store.touch(this.host, this.owner);
    const afterRefusal = this.refusedMaybeSnapshot;
    this.refusedMaybeSnapshot = false;
    switch (f.type) {
      case 'hello':
        return this.refuse({ type: 'error', code: 'protocol', message: 'hello was already received on this link' });
      case 'snapshot':
        // The refused frame just before may have been this snapshot's first part.
        if (afterRefusal && !this.o.store.snapshotPending(this.host, this.owner)) return this.brokenSnapshot();
        if (!this.o.store.snapshotPending(this.host, this.owner)) this.pendingSnapshotBytes = 0;
        this.pendingSnapshotBytes += text.length;
        if (!f.complete && this.pendingSnapshotBytes > (this.o.pendingSnapshotMaxBytes ?? PENDING_SNAPSHOT_MAX_BYTES)) {
          this.o.store.requireSnapshot(this.host, this.owner);
          return this.fail('too-large', `incomplete snapshot parts exceed ${this.o.pendingSnapshotMaxBytes ?? PENDING_SNAPSHOT_MAX_BYTES} bytes`);
        }
        return this.applied(this.o.store.applySnapshot(this.host, this.owner, f), f.complete);
      case 'delta':
        return this.applied(this.o.store.applyDelta(this.host, this.owner, f), false);
      case 'server':
        return this.applied(this.o.store.applyServer(this.host, this.owner, f), false);
      case 'heartbeat':
        this.o.store.noteHeartbeat(this.host, this.owner, f.at, f.seq);
        // A resumed link proves itself by a heartbeat without a resync asked before it.
        if (this.resumed && !this.resyncAsked) this.accepted();
        return;
      case 'error':
        this.log.warn({ code: f.code, reason: f.message }, 'collector reported an error');
        return;
      case 'act_result':
      case 'mute_result':
      case 'preview_result':
        return this.answered(f.type, f.id, f.result);
      case 'notify':
        if (!admitted && this.notifyRefused()) return;
        return this.notified(f);
    }
  }

  /** Whether the host's notify budget refuses this frame; its reason goes back when one is due. */
  private notifyRefused(): boolean {
    const a = this.o.admitNotify?.(this.host) ?? null;
    if (a?.frame) this.send(a.frame);
    return a !== null;
  }

  /** Acknowledged only once recorded: an unacknowledged notification is sent again by the host. */
  private notified(f: Extract<CollectorFrame, { type: 'notify' }>): void {
    const unrecorded = (e: unknown) => {
      this.log.error({ err: (e as Error).message }, 'notification could not be recorded; not acknowledged');
    };
    try {
      void Promise.resolve(this.o.onNotify?.(this.host, f.event)).then(() => {
        if (this.phase !== 'closed') this.send({ type: 'notify_ack', ids: [f.id] });
      }, unrecorded);
    } catch (e) {
      unrecorded(e);
    }
  }

  /**
   * A frame after hello failed to decode. It is dropped; but if it was a part of a split snapshot,
   * the parts around it must not be committed as if they were the whole: a server's rows would go
   * missing while the host looked up to date.
   */
  private refusedFrame(error: FrameError, type: string | undefined): void {
    this.refuse(error);
    if (this.o.store.snapshotPending(this.host, this.owner)) return this.brokenSnapshot();
    // Unreadable (bad JSON, oversized), the frame may have been a snapshot part too.
    this.refusedMaybeSnapshot = error.code === 'bad-json' || error.code === 'too-large' || type === 'snapshot';
  }

  /**
   * A split snapshot lost a part. Its other parts may still be in flight, and on this link they
   * cannot be told from a fresh snapshot's, so the link ends: the rows stay, stale, and the
   * collector's redial (with backoff) starts over from a fresh snapshot.
   */
  private brokenSnapshot(): void {
    this.o.store.requireSnapshot(this.host, this.owner);
    this.fail('protocol', 'a snapshot part was refused; reconnect for a fresh snapshot');
  }

  private hello(f: Extract<CollectorFrame, { type: 'hello' }>): void {
    if (f.protocol !== PROTOCOL_VERSION) {
      return this.refuseHello('protocol', `protocol ${f.protocol} is not supported (this hub speaks ${PROTOCOL_VERSION})`);
    }
    const rebound = f.host !== this.host && this.o.rebindHost === true;
    if (f.host !== this.host && !rebound) {
      return this.refuseHello('host-mismatch', `this credential publishes for host ${this.host}, not ${f.host}`);
    }
    const busy = this.o.admit?.(this) ?? null;
    if (busy !== null) return this.refuseHello('host-busy', busy);
    const { resumeFrom, reconnect } = this.o.store.hello(
      this.host,
      {
        transport: this.o.transport,
        epoch: f.epoch,
        collectorVersion: f.collector_version,
        actionsAllowed: f.actions_allowed,
        actionsByAgent: f.actions_by_agent ?? null,
        sharesPrompt: f.share_prompt ?? null,
        remoteVerbs: f.remote_verbs,
        at: f.at,
      },
      this.owner,
    );
    if (reconnect) this.o.metrics.reconnects++;
    this.resumed = resumeFrom !== null;
    this.phase = 'open';
    // From here on, silence is measured against the heartbeat, not the hello grace.
    if (this.deadTimer) clearTimeout(this.deadTimer);
    this.armDeadTimer(this.o.deadAfterMs);
    // `host` only when it differs and `hubs` only when configured, so a collector that predates the keys never sees them.
    const hubs = this.o.fleetHubs?.() ?? [];
    this.send({
      type: 'welcome',
      protocol: PROTOCOL_VERSION,
      resume_from: resumeFrom,
      ...(rebound ? { host: this.host } : {}),
      ...(hubs.length > 0 ? { hubs: [...hubs] } : {}),
    });
    this.log.info(
      { via: this.o.transport, resume_from: resumeFrom, collector_version: f.collector_version, ...(rebound ? { hello_host: f.host } : {}) },
      'collector connected',
    );
    this.o.onHello?.(this);
    this.heartbeatTimer = setInterval(() => this.send({ type: 'heartbeat', at: this.clock() }), this.o.heartbeatMs);
    this.heartbeatTimer.unref?.();
  }

  private applied(r: ApplyOutcome, snapshotComplete: boolean): void {
    if (r.ok) {
      this.o.metrics.framesApplied++;
      if (snapshotComplete) {
        this.resyncAsked = false;
        this.accepted();
      }
      return;
    }
    if (r.code === 'not-owner') return this.close('replaced by a newer link for this host');
    if (r.code === 'epoch') return this.refuse({ type: 'error', code: 'protocol', message: r.message });
    // gap, unknown incarnation, or no baseline: a change may be missing, so only a fresh snapshot
    // can be trusted. Asked once; frames already in flight after the ask are dropped quietly.
    if (this.resyncAsked) return;
    this.resyncAsked = true;
    this.o.metrics.resyncs++;
    this.refuse({ type: 'error', code: 'protocol', message: `${r.message}; send a fresh snapshot` });
    this.o.store.requireSnapshot(this.host, this.owner);
    this.send({ type: 'welcome', protocol: PROTOCOL_VERSION, resume_from: null });
  }

  private answered(type: string, id: string, result: ActResult | MuteResult | PreviewResult): void {
    const p = this.pending.get(id);
    // An answer of the wrong kind (a mute_result for an act) never resolves the request.
    if (!p || p.answer !== type) {
      this.log.info({ id, type }, 'answer for no pending request');
      return;
    }
    this.pending.delete(id);
    clearTimeout(p.timer);
    (p.resolve as (r: unknown) => void)(result);
  }

  /** Send a request (act, mute, preview) and wait for its answer, at most `timeoutMs`. */
  request(frame: ActRequest, timeoutMs: number): Promise<ActResult>;
  request(frame: MuteRequest, timeoutMs: number): Promise<MuteResult>;
  request(frame: PreviewRequest, timeoutMs: number): Promise<PreviewResult>;
  request(frame: HostRequest, timeoutMs: number): Promise<unknown> {
    if (this.phase !== 'open') return Promise.reject(new LinkClosedError(`link to ${this.host} is not open`));
    if (this.pending.has(frame.id)) return Promise.reject(new Error(`act id ${frame.id} is already pending`));
    return new Promise<unknown>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(frame.id);
        reject(new ActTimeoutError(frame.id, timeoutMs));
      }, timeoutMs);
      this.pending.set(frame.id, { answer: ANSWER[frame.type], resolve, reject, timer });
      this.send(frame);
    });
  }

  private silenceLimitMs(): number {
    return this.phase === 'awaiting-hello' ? Math.max(this.o.deadAfterMs, HELLO_TIMEOUT_MS) : this.o.deadAfterMs;
  }

  private armDeadTimer(ms: number): void {
    this.deadTimer = setTimeout(() => {
      // Re-armed lazily rather than on every frame: a busy link costs no timer churn.
      const left = this.lastHeardMs + this.silenceLimitMs() - this.clock();
      if (left > 0) return this.armDeadTimer(left);
      // Timers run before sockets are read: after a stall of the hub's own event loop, frames may
      // be waiting unread. setImmediate runs after that read, so only real silence closes the link.
      setImmediate(() => {
        if (this.phase === 'closed') return;
        const still = this.lastHeardMs + this.silenceLimitMs() - this.clock();
        if (still > 0) return this.armDeadTimer(still);
        this.log.warn({ silent_ms: this.clock() - this.lastHeardMs }, 'collector link silent; marking host stale');
        this.close(`silent for ${this.silenceLimitMs()} ms`);
      });
    }, ms);
    this.deadTimer.unref?.();
  }

  close(reason = 'closed by hub'): void {
    if (this.phase === 'closed') return;
    this.ended(reason);
    // Deferred so an error frame sent just before leaves first on links that drop queued sends.
    queueMicrotask(() => this.o.link.close(reason));
  }

  private ended(reason: string): void {
    if (this.phase === 'closed') return;
    const wasOpen = this.phase === 'open';
    this.phase = 'closed';
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    if (this.deadTimer) clearTimeout(this.deadTimer);
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer);
      p.reject(new LinkClosedError(`link to ${this.host} closed before act ${id} answered`));
    }
    this.pending.clear();
    if (wasOpen) {
      this.o.store.linkDown(this.host, this.owner, reason);
      // The reason is the hub's own wording or the peer's close frame, cut short either way.
      this.log.info({ via: this.o.transport, reason: reason.slice(0, 200) }, 'collector disconnected');
    }
    this.o.onEnd?.(this);
  }
}
