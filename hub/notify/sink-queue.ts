// One sink's queue of notifications: events arriving close together go out as one grouped message,
// a failed message is retried with capped, jittered backoff for a bounded time, a blocked event
// waits out the sink's dwell first, and messages formed before a restart go again under their ids.
// What it records and asks goes through the notifier that owns it (QueueOwner).

import type { Logger } from 'pino';
import { notificationKey } from '../../shared/notify.js';
import type { deliver as realDeliver, Batch, DeliverContext } from './deliver.js';
import { dwellLeft, type SkipReason } from './hold.js';
import { JOURNAL_PENDING_MAX, type DeliveryState, type HubNotification } from './journal.js';
import type { NotifySinkConfig } from './sink-config.js';

export interface NotifyTiming {
  /** Events within this window of the first ready one go out together. */
  groupMs: number;
  retryBaseMs: number;
  retryCapMs: number;
  /** A message still failing this long after its first attempt is given up. */
  retryForMs: number;
}

// The first event goes out (almost) at once: the short gather only catches the rest of one
// collector cycle's frames; whatever comes while a message is on its way or retrying joins the next.
export const DEFAULT_NOTIFY_TIMING: NotifyTiming = { groupMs: 50, retryBaseMs: 1000, retryCapMs: 8000, retryForMs: 15 * 60_000 };

export interface SinkCounters {
  sent: number;
  failed: number;
  retried: number;
  dropped: number;
  skipped: Record<SkipReason, number>;
}

/** Delay before retry `attempt` (1-based): half the capped exponential step, plus up to half again. */
export function retryDelay(attempt: number, t: Pick<NotifyTiming, 'retryBaseMs' | 'retryCapMs'>, random: () => number): number {
  const step = Math.min(t.retryCapMs, t.retryBaseMs * 2 ** Math.min(attempt - 1, 20));
  return Math.round(step / 2 + (random() * step) / 2);
}

/** Which host triggers (and, for resolved, which earlier delivery) a sink takes. */
export function sinkWants(sink: NotifySinkConfig, n: Pick<HubNotification, 'trigger' | 'host'>, tookBlocked: boolean): boolean {
  if (sink.hosts && !sink.hosts.includes(n.host)) return false;
  if (n.trigger === 'resolved') return sink.kind !== 'ntfy' && tookBlocked;
  return sink.on.includes(n.trigger);
}

/** Events one message carries at most; more wait for the next message. */
export const MAX_BATCH_EVENTS = 100;

/** How many resumed message ids a queue remembers having sent again. */
const RESUMED_KEPT = 1000;

type Flight = Batch & { firstAt: number; attempts: number; written: Promise<void> };

export class SinkQueue {
  private waiting: HubNotification[] = [];
  /** Messages formed before a restart or reload, sent first and under the ids they had. */
  private resumed = new Map<string, HubNotification[]>();
  /** Resumed messages already on their way again (the last RESUMED_KEPT): a late part goes alone. */
  private readonly resent = new Set<string>();
  private batch: Flight | null = null;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private stopped = false;
  private seq = 0;
  /** Blocked notifications waiting out their dwell, and what follows each (its `resolved`). */
  private readonly dwelling = new Map<string, { timer: ReturnType<typeof setTimeout>; followers: HubNotification[] }>();

  constructor(
    readonly sink: NotifySinkConfig,
    private readonly hub: QueueOwner,
  ) {}

  push(n: HubNotification): void {
    if (this.stopped) return;
    const blockedId = n.trigger === 'resolved' ? blockedIdOf(n) : null;
    const ahead = blockedId === null ? undefined : this.dwelling.get(blockedId);
    if (ahead) {
      ahead.followers.push(n);
      return;
    }
    const wait = dwellLeft(this.sink, n, this.hub.clock());
    if (wait > 0) {
      this.dwelling.set(n.id, { timer: this.hub.later(() => this.dwelt(n), wait), followers: [] });
      return;
    }
    this.admit(n);
  }

  private dwelt(n: HubNotification): void {
    const d = this.dwelling.get(n.id);
    if (this.stopped || !d) return;
    // A hub just (re)started may not have the pane's row yet: ask again shortly, not "answered".
    if (this.hub.rowPending(n)) {
      d.timer = this.hub.later(() => this.dwelt(n), 1000);
      return;
    }
    this.dwelling.delete(n.id);
    this.admit(n);
    for (const f of d?.followers ?? []) this.admit(f);
  }

  /** The dwell is over (or there was none): skip it now, or queue it. */
  private admit(n: HubNotification): void {
    if (!this.owed(n)) return;
    const why = this.hub.skipFor(this.sink, n);
    if (why) {
      this.hub.skip(n, this.sink.name, why);
      return;
    }
    this.waiting.push(n);
    // The journal gives up entries past its bound; a sink that stays down must not hold them here.
    if (this.waiting.length > 2 * JOURNAL_PENDING_MAX) this.waiting = this.waiting.filter((e) => this.owed(e));
    this.soon();
  }

  /** A message the journal says was formed (and maybe sent) before: it goes again as it was. */
  resume(delivery: string, n: HubNotification): void {
    if (this.stopped) return;
    if (this.resent.has(delivery)) {
      // The rest of a message that came back split (a shared stream hands a dead hub's events
      // over one by one): under the id already sent, a receiver that drops repeats would lose it.
      this.waiting.push(n);
      this.soon();
      return;
    }
    const events = this.resumed.get(delivery) ?? [];
    events.push(n);
    this.resumed.set(delivery, events);
    this.soon();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    for (const d of this.dwelling.values()) clearTimeout(d.timer);
    this.dwelling.clear();
  }

  /** Nothing on its way: go after the short gather. On its way or retrying: it joins the next. */
  private soon(): void {
    if (!this.batch && !this.timer) this.timer = this.hub.later(() => this.start(), this.hub.timing.groupMs);
  }

  private owed(n: HubNotification): boolean {
    return this.hub.owed(n.id, this.sink.name);
  }

  private nextId(): string {
    return `${this.sink.name}-${this.hub.clock().toString(36)}-${(this.seq++).toString(36)}`;
  }

  private start(): void {
    this.timer = null;
    if (this.stopped || this.batch) return;
    const now = this.hub.clock();
    for (const [id, events] of this.resumed) {
      this.resumed.delete(id);
      const owed = events.filter((e) => this.owed(e));
      if (!owed.length) continue;
      this.resent.add(id);
      if (this.resent.size > RESUMED_KEPT) this.resent.delete(this.resent.values().next().value!);
      this.batch = { id, events: owed, firstAt: now, attempts: 0, written: Promise.resolve() };
      void this.attempt();
      return;
    }
    this.waiting = this.waiting.filter((e) => this.owed(e));
    if (!this.waiting.length) return;
    const id = this.nextId();
    const events = this.waiting.splice(0, MAX_BATCH_EVENTS);
    // The id is on disk before the message leaves, so a restart sends it again under the same id.
    this.batch = { id, events, firstAt: now, attempts: 0, written: this.hub.formed(this.sink.name, id, events) };
    void this.attempt();
  }

  private async attempt(): Promise<void> {
    this.timer = null;
    const b = this.batch;
    if (this.stopped || !b) return;
    b.attempts++;
    const c = this.hub.counters(this.sink.name);
    try {
      await b.written;
      await this.hub.deliverFn(this.sink, { id: b.id, events: b.events }, this.hub.context);
    } catch (e) {
      if (this.stopped) return;
      const reason = (e as Error).message.slice(0, 200);
      c.failed++;
      const now = this.hub.clock();
      for (const n of b.events) this.hub.note(n.id, this.sink.name, 'pending', b.attempts, reason, false);
      if (now - b.firstAt >= this.hub.timing.retryForMs) {
        this.hub.log.warn({ sink: this.sink.name, events: b.events.length, reason }, 'notification delivery given up');
        c.dropped += b.events.length;
        this.hub.finished(this.sink.name, b, 'failed', reason);
        this.batch = null;
        this.startSoon();
        return;
      }
      c.retried++;
      // Whatever arrived during the outage joins the retried message: one message on recovery.
      // That is another message (other events), so it gets its own id, recorded like the first.
      this.waiting = this.waiting.filter((e) => this.owed(e));
      const room = MAX_BATCH_EVENTS - b.events.length;
      if (this.waiting.length && room > 0) {
        b.events.push(...this.waiting.splice(0, room));
        b.id = this.nextId();
        b.written = this.hub.formed(this.sink.name, b.id, b.events);
      }
      const delay = retryDelay(b.attempts, this.hub.timing, this.hub.random);
      this.hub.log.info({ sink: this.sink.name, reason, retry_in_ms: delay }, 'notification delivery failed; will retry');
      this.timer = this.hub.later(() => void this.attempt(), delay);
      return;
    }
    c.sent += b.events.length;
    this.hub.finished(this.sink.name, b, 'sent', null);
    this.batch = null;
    this.startSoon();
  }

  /** A message ended: what gathered meanwhile goes now, as one message. */
  private startSoon(): void {
    if (!this.stopped && (this.waiting.length || this.resumed.size) && !this.timer) this.timer = this.hub.later(() => this.start(), 0);
  }
}

/** The hub id of the blocked notification a `resolved` one ends. */
export const blockedIdOf = (n: HubNotification): string => JSON.stringify([n.host, notificationKey({ ...n, trigger: 'blocked' })]);
/** What a sink queue needs of the notifier that owns it (hub-notifier.ts). */
export interface QueueOwner {
  readonly timing: NotifyTiming;
  readonly clock: () => number;
  readonly random: () => number;
  readonly deliverFn: typeof realDeliver;
  readonly log: Logger;
  readonly context: DeliverContext;
  skipFor(sink: NotifySinkConfig, n: HubNotification): SkipReason | null;
  rowPending(n: HubNotification): boolean;
  skip(n: HubNotification, sink: string, why: SkipReason): void;
  owed(id: string, sink: string): boolean;
  formed(sink: string, delivery: string, events: HubNotification[]): Promise<void>;
  finished(sink: string, b: Batch & { attempts: number }, state: 'sent' | 'failed', error: string | null): void;
  counters(sink: string): SinkCounters;
  note(id: string, sink: string, state: DeliveryState, attempts: number, error: string | null, durable: boolean): void;
  later(fn: () => void, ms: number): ReturnType<typeof setTimeout>;
}
