// Notifications on their way to a hub. Each stays here until the hub acknowledges it (the hub acks
// only after recording it durably), and everything unacknowledged is sent again whenever a link
// comes up, so a cut link or a restarted hub loses nothing; the hub's dedup on the notification's
// key makes the resends harmless. With a file (`$XDG_STATE_HOME/tma/`), each notification is
// appended and fsynced before it is offered, so one rung while the hub is down also survives a
// collector crash; acks are appended too, and the file is rewritten once it holds mostly acked lines.

import { closeSync, fsync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, write, writeSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fleetNotificationSchema, notificationKey, type FleetNotification } from '../../shared/notify.js';
import type { CollectorFrame } from '../../shared/protocol.js';
import type { LineLog } from '../../shared/log-level.js';

/** Past this many unacknowledged notifications the oldest are dropped (a hub gone for days). */
export const OUTBOX_MAX = 2000;
/** Unacked notifications on a live link are offered again this often. */
export const RESEND_MS = 15_000;

export type SendLive = (frame: CollectorFrame) => boolean;

/** Where a collector keeps its outbox: one file per host name it publishes as. */
export function outboxPath(env: NodeJS.ProcessEnv, host: string): string {
  const base = env.XDG_STATE_HOME || join(env.HOME || homedir(), '.local', 'state');
  return join(base, 'tma', `notify-outbox-${host.replace(/[^A-Za-z0-9._-]/g, '_')}.jsonl`);
}

export class NotifyOutbox {
  private readonly pending = new Map<string, { event: FleetNotification; sentAt: number }>();
  private send: SendLive = () => false;
  private timer: ReturnType<typeof setInterval> | null = null;
  private fd: number | null = null;
  private lines = 0;

  constructor(private readonly opts: { max?: number; log?: LineLog; now?: () => number; file?: string } = {}) {
    if (!opts.file) return;
    try {
      this.load(opts.file);
    } catch (e) {
      this.fd = null;
      opts.log?.(`notify: the outbox file cannot be used (${(e as Error).message}); notifications are kept in memory only`, 'warn');
    }
  }

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
    if (this.fd === null) {
      this.send({ type: 'notify', id, event });
      return;
    }
    // Offered once it is on disk; the write and fsync run off the loop, a burst in one go.
    this.queued.push(`${JSON.stringify({ add: event })}\n`);
    this.afterSync.push(() => {
      if (this.pending.has(id)) this.send({ type: 'notify', id, event });
    });
    if (!this.syncing) void this.drain();
  }

  private queued: string[] = [];
  private afterSync: (() => void)[] = [];
  private syncing = false;
  /** Lines handed to the write in progress (written again by close(): a repeat line is harmless). */
  private inflight = '';

  private async drain(): Promise<void> {
    this.syncing = true;
    while (this.queued.length && this.fd !== null) {
      const text = (this.inflight = this.queued.splice(0).join(''));
      const then = this.afterSync.splice(0);
      const fd = this.fd;
      try {
        await new Promise<void>((ok, fail) => write(fd, text, (e) => (e ? fail(e) : ok())));
        await new Promise<void>((ok, fail) => fsync(fd, (e) => (e ? fail(e) : ok())));
        this.lines += text.split('\n').length - 1;
      } catch (e) {
        // Still offered to the hub; only a crash before its ack could lose it now.
        this.opts.log?.(`notify: cannot write the outbox file: ${(e as Error).message}`, 'warn');
      }
      this.inflight = '';
      for (const f of then) f();
    }
    this.syncing = false;
    if (this.fd !== null && this.opts.file && this.lines > 2 * this.pending.size + 256) this.rewrite(this.opts.file);
  }

  /** A link came up: offer everything still unacknowledged. */
  flush(): void {
    this.resend(0);
  }

  ack(ids: readonly string[]): void {
    const gone = ids.filter((id) => this.pending.delete(id));
    // Through the same queue as the adds, so the file keeps their order.
    if (gone.length && this.fd !== null) {
      this.queued.push(`${JSON.stringify({ ack: gone })}\n`);
      if (!this.syncing) void this.drain();
    }
  }

  get size(): number {
    return this.pending.size;
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    if (this.fd !== null && (this.inflight || this.queued.length)) writeSync(this.fd, this.inflight + this.queued.splice(0).join(''));
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
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

  /** What a previous run left unacknowledged; an unreadable line (a torn last write) is skipped. */
  private load(file: string): void {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    let text = '';
    try {
      text = readFileSync(file, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
    for (const raw of text.split('\n')) {
      let line: { add?: unknown; ack?: unknown };
      try {
        line = JSON.parse(raw) as typeof line;
      } catch {
        continue;
      }
      const ev = fleetNotificationSchema.safeParse(line.add);
      if (ev.success) this.pending.set(notificationKey(ev.data), { event: ev.data, sentAt: -Infinity });
      if (Array.isArray(line.ack)) for (const id of line.ack) if (typeof id === 'string') this.pending.delete(id);
    }
    while (this.pending.size > (this.opts.max ?? OUTBOX_MAX)) this.pending.delete(this.pending.keys().next().value as string);
    this.rewrite(file);
  }

  /** The file holds just what is unacknowledged, written aside and renamed over (fsynced). */
  private rewrite(file: string): void {
    if (this.fd !== null) closeSync(this.fd);
    const tmp = `${file}.tmp`;
    const fd = openSync(tmp, 'w', 0o600);
    writeSync(fd, [...this.pending.values()].map((p) => `${JSON.stringify({ add: p.event })}\n`).join(''));
    fsyncSync(fd);
    closeSync(fd);
    renameSync(tmp, file);
    this.lines = this.pending.size;
    this.fd = openSync(file, 'a', 0o600);
  }
}
