// Notifications on their way to a hub. Each stays here until the hub acknowledges it (the hub acks
// only after recording it durably), and everything unacknowledged is sent again whenever a link
// comes up, so a cut link or a restarted hub loses nothing; the hub's dedup on the notification's
// key makes the resends harmless. Held in memory: a collector restart loses what was unacked.

import { notificationKey, type FleetNotification } from '../../shared/notify.js';
import type { CollectorFrame } from '../../shared/protocol.js';
import type { LineLog } from '../../shared/log-level.js';

/** Past this many unacknowledged notifications the oldest are dropped (a hub gone for days). */
export const OUTBOX_MAX = 2000;
/** Unacked notifications on a live link are offered again this often. */
export const RESEND_MS = 15_000;

export type SendLive = (frame: CollectorFrame) => boolean;

export class NotifyOutbox {
  private readonly pending = new Map<string, { event: FleetNotification; sentAt: number }>();
  private send: SendLive = () => false;
  private timer: ReturnType<typeof setInterval> | null = null;

  constructor(private readonly opts: { max?: number; log?: LineLog; now?: () => number } = {}) {}

  /** Where frames go: true when a live link took it. */
  bind(send: SendLive): void {
    this.send = send;
    this.timer ??= setInterval(() => this.resend(RESEND_MS), RESEND_MS);
    this.timer.unref?.();
  }

  add(event: FleetNotification): void {
    const id = notificationKey(event);
    if (this.pending.has(id)) return;
    const max = this.opts.max ?? OUTBOX_MAX;
    while (this.pending.size >= max) {
      const oldest = this.pending.keys().next().value as string;
      this.pending.delete(oldest);
      this.opts.log?.('notify: too many notifications unacknowledged by the hub; dropping the oldest', 'warn');
    }
    const now = (this.opts.now ?? Date.now)();
    this.pending.set(id, { event, sentAt: now });
    this.send({ type: 'notify', id, event });
  }

  /** A link came up: offer everything still unacknowledged. */
  flush(): void {
    this.resend(0);
  }

  ack(ids: readonly string[]): void {
    for (const id of ids) this.pending.delete(id);
  }

  get size(): number {
    return this.pending.size;
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private resend(olderThanMs: number): void {
    const now = (this.opts.now ?? Date.now)();
    for (const [id, p] of this.pending) {
      // Sent "in the future" is a clock that stepped back since: offer it again now.
      const age = now - p.sentAt;
      if (age >= 0 && age < olderThanMs) continue;
      if (!this.send({ type: 'notify', id, event: p.event })) return;
      p.sentAt = now;
    }
  }
}
