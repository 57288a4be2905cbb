// The hub's notifier: accepts collectors' notifications once per (host, server, pane, trigger,
// episode), journals them before acknowledging, and hands each to the sinks that want it. Every
// sink has its own queue (sink-queue.ts: grouping, dwell, retries), and a restarted hub resumes
// whatever its journal says is still owed.

import type { Logger } from 'pino';
import { notificationKey, type FleetNotification, FLEET_NOTIFICATION_KEYS } from '../../shared/notify.js';
import { deliver as realDeliver, type Batch, type DeliverContext } from './deliver.js';
import { FrameBudget, NOTIFY_BURST, NOTIFY_PER_SEC, type Admission } from './frame-budget.js';
import { skippedLines, skipReason, type NotifyFleetView, type SkipReason } from './hold.js';
import { JOURNAL_KEEP, JOURNAL_PENDING_MAX, NotifyJournal, type DeliveryState, type HubNotification, type JournalEntry } from './journal.js';
import { LogSampler } from '../http/sampled-log.js';
import type { NotifySinkConfig } from './sink-config.js';
import { blockedIdOf, DEFAULT_NOTIFY_TIMING, SinkQueue, sinkWants, type NotifyTiming, type QueueOwner, type SinkCounters } from './sink-queue.js';

export interface HubNotifierOptions {
  journalPath: string | null;
  sinks: NotifySinkConfig[];
  logger: Logger;
  context: DeliverContext;
  timing?: Partial<NotifyTiming>;
  clock?: () => number;
  random?: () => number;
  deliver?: typeof realDeliver;
  /** Journal bounds (tests); defaults JOURNAL_KEEP and JOURNAL_PENDING_MAX. */
  keep?: number;
  pendingMax?: number;
  /** Notify frames each host may send (tests); default NOTIFY_BURST at NOTIFY_PER_SEC. */
  budget?: FrameBudget;
  /** The store's view of panes, for the dwell and "looking"; absent, a dwelling sink skips. */
  fleet?: NotifyFleetView;
  /** The journal (another backend may stand in); default the JSONL file at journalPath. */
  journal?: NotifyJournalStore;
  /**
   * Hubs sharing notifications (NATS): an accepted one is published for the fleet instead of
   * queued here, and each sink's queue is fed what the shared consumers hand this hub (`take`).
   */
  shared?: SharedNotify;
}

/** The fleet's side of shared notifications (hub/nats/notify-consumers.ts). */
export interface SharedNotify {
  /** Store an accepted notification for every hub; resolves once stored, false when it was a repeat. */
  publish(n: HubNotification): Promise<boolean>;
  /** The sink set is now `sinks`: take for these (what was held for the old set is given back). */
  sinks(sinks: NotifySinkConfig[]): void;
  close(): void;
}

/** What the notifier needs of its journal: the JSONL NotifyJournal, or another store like it. */
export type NotifyJournalStore = Pick<
  NotifyJournal,
  'has' | 'get' | 'size' | 'stats' | 'recent' | 'unfinished' | 'accept' | 'batch' | 'done' | 'mark' | 'close' | 'onDrop' | 'onError'
>;

export class HubNotifier implements QueueOwner {
  readonly timing: NotifyTiming;
  readonly clock: () => number;
  readonly random: () => number;
  readonly deliverFn: typeof realDeliver;
  readonly log: Logger;
  readonly context: DeliverContext;
  private readonly journal: NotifyJournalStore;
  private readonly budget: FrameBudget;
  private readonly sampler = new LogSampler();
  private readonly fleet: NotifyFleetView | null;
  /** The last episode each sink took of each pane, for its cooldown. */
  private readonly lastRung = new Map<string, { episode_ms: number; at: number }>();
  /** Notifications accepted and not yet on disk: a resend meanwhile waits for the same write. */
  private readonly accepting = new Map<string, Promise<void>>();
  private queues = new Map<string, SinkQueue>();
  private readonly stats = new Map<string, SinkCounters>();
  private sinks: NotifySinkConfig[] = [];
  private readonly shared: SharedNotify | null;
  accepted = 0;
  duplicates = 0;
  refused = 0;

  constructor(o: HubNotifierOptions) {
    this.timing = { ...DEFAULT_NOTIFY_TIMING, ...o.timing };
    this.clock = o.clock ?? Date.now;
    this.random = o.random ?? Math.random;
    this.deliverFn = o.deliver ?? realDeliver;
    this.log = o.logger.child({ part: 'notify' });
    this.context = o.context;
    this.fleet = o.fleet ?? null;
    this.shared = o.shared ?? null;
    this.startedAt = this.clock();
    this.journal = o.journal ?? new NotifyJournal(o.journalPath, o.keep ?? JOURNAL_KEEP, o.pendingMax ?? JOURNAL_PENDING_MAX);
    this.journal.onDrop = (e, sinks) => {
      for (const s of sinks) this.counters(s).dropped++;
      this.sampledWarn('drop', { host: e.n.host, sinks }, 'notification given up: too many undelivered');
    };
    this.journal.onError = (e) => this.sampledWarn('journal', { err: e.message }, 'notification journal write failed');
    this.budget = o.budget ?? new FrameBudget(NOTIFY_BURST, NOTIFY_PER_SEC, this.clock);
    this.setSinks(o.sinks);
  }

  /** Whether `sink`'s action links need a signed-in device beside them (a sink no longer listed: no). */
  linkConfirm(sink: string): 'link' | 'device' {
    return this.sinks.find((s) => s.name === sink)?.actionConfirm ?? 'link';
  }

  /** Swap the sink set (a config reload); what a sink still owes goes to its namesake, if any. */
  setSinks(sinks: NotifySinkConfig[]): void {
    for (const q of this.queues.values()) q.stop();
    this.sinks = sinks;
    this.queues = new Map(sinks.map((s) => [s.name, new SinkQueue(s, this)]));
    // Shared: what is owed comes back through the consumers, to whichever hub takes it.
    if (this.shared) return this.shared.sinks(sinks);
    for (const e of this.journal.unfinished()) {
      for (const [name, d] of e.sinks) {
        if (d.state !== 'pending') continue;
        const q = this.queues.get(name);
        if (q && d.delivery) q.resume(d.delivery, e.n);
        else if (q) q.push(e.n);
        else this.note(e.n.id, name, 'failed', d.attempts, 'sink no longer configured', true);
      }
    }
  }

  /**
   * One notify frame from `host` against its budget, asked by the link before the frame is
   * handled (before it is decoded where it can tell): null admits it.
   */
  admit(host: string): Admission {
    const a = this.budget.take(host);
    if (a === null) return null;
    this.refused++;
    if (a.frame) this.sampledWarn(`budget:${host}`, { host }, a.frame.message);
    return a;
  }

  /**
   * A collector's notification (admitted). Resolves once it is durably recorded (or known
   * already): the caller acknowledges then. Rejects if it cannot be recorded, so no ack goes out
   * and the collector sends it again.
   */
  receive(host: string, event: FleetNotification): Promise<void> {
    const id = JSON.stringify([host, notificationKey(event)]);
    const writing = this.accepting.get(id);
    if (writing || this.journal.has(id)) {
      this.duplicates++;
      return writing ?? Promise.resolve();
    }
    const n = { ...ordered(event), id, host, received_ms: this.clock() } as HubNotification;
    if (this.shared) return this.publish(id, n);
    const blocked = n.trigger === 'resolved' ? this.journal.get(JSON.stringify([host, notificationKey({ ...event, trigger: 'blocked' })])) : undefined;
    const targets = this.sinks.filter((s) => sinkWants(s, n, blocked?.sinks.has(s.name) ?? false));
    const done = this.journal
      .accept(
        n,
        targets.map((s) => s.name),
      )
      .then(
        () => {
          this.accepting.delete(id);
          this.accepted++;
          for (const s of targets) this.queues.get(s.name)?.push(n);
        },
        (e: unknown) => {
          this.accepting.delete(id);
          throw e;
        },
      );
    this.accepting.set(id, done);
    return done;
  }

  private publish(id: string, n: HubNotification): Promise<void> {
    const done = this.shared!.publish(n).then(
      (fresh) => {
        this.accepting.delete(id);
        if (fresh) this.accepted++;
        else this.duplicates++;
      },
      (e: unknown) => {
        this.accepting.delete(id);
        throw e;
      },
    );
    this.accepting.set(id, done);
    return done;
  }

  /** Shared: whether `sink` takes `n` (the rule `receive` applies to the sinks of one hub). */
  wants(sink: NotifySinkConfig, n: HubNotification): boolean {
    return sinkWants(sink, n, this.journal.get(blockedIdOf(n))?.sinks.has(sink.name) ?? false);
  }

  /** Shared: a consumer handed this hub `n` for `sink`; a message formed for it before goes again as `delivery`. */
  take(sink: string, n: HubNotification, delivery: string | null): boolean {
    const q = this.queues.get(sink);
    if (!q) return false;
    if (delivery) q.resume(delivery, n);
    else q.push(n);
    return true;
  }

  /** Why `sink` holds `n` back now, if it does; a pane it takes starts its cooldown. */
  skipFor(sink: NotifySinkConfig, n: HubNotification): SkipReason | null {
    if (n.trigger === 'resolved') {
      const b = this.journal.get(blockedIdOf(n))?.sinks.get(sink.name);
      return b && b.state === 'skipped' ? 'unsent' : null;
    }
    const key = JSON.stringify([sink.name, n.host, n.server, n.pane]);
    const now = this.clock();
    const why = skipReason(sink, n, this.fleet, this.lastRung.get(key), now);
    if (why === null && n.trigger !== 'context_high') this.lastRung.set(key, { episode_ms: n.episode_ms, at: now });
    return why;
  }

  private readonly startedAt: number;

  /** No row for the pane yet, within the first 30 s of this hub: its collector may not be back. */
  rowPending(n: HubNotification): boolean {
    return this.clock() - this.startedAt < 30_000 && this.fleet?.pane(n.host, n.server, n.pane) === null;
  }

  /** Held back on purpose: journaled (a restart does not send it), counted, and logged. */
  skip(n: HubNotification, sink: string, why: SkipReason): void {
    this.counters(sink).skipped[why]++;
    this.log.info({ sink, host: n.host, pane: n.pane, trigger: n.trigger, reason: why }, 'notification skipped');
    this.note(n.id, sink, 'skipped', 0, why, true);
  }

  /** Whether `sink` still owes notification `id` (not sent, not given up, not forgotten). */
  owed(id: string, sink: string): boolean {
    return this.journal.get(id)?.sinks.get(sink)?.state === 'pending';
  }

  /** A message was formed: its id and events go to the journal before it is sent. */
  formed(sink: string, delivery: string, events: HubNotification[]): Promise<void> {
    return this.journal
      .batch(
        sink,
        delivery,
        events.map((e) => e.id),
      )
      .catch((e: unknown) => {
        // Sending anyway beats holding every notification back on a journal that cannot write.
        this.log.error({ err: (e as Error).message }, 'notification journal write failed');
      });
  }

  /** A message reached its end with a sink: one journal line for every event it carried. */
  finished(sink: string, b: Batch & { attempts: number }, state: 'sent' | 'failed', error: string | null): void {
    this.journal
      .done(
        sink,
        b.id,
        b.events.map((e) => e.id),
        state,
        b.attempts,
        error,
        this.clock(),
      )
      .catch((e: unknown) => {
        this.log.error({ err: (e as Error).message }, 'notification journal write failed');
      });
  }

  private sampledWarn(key: string, fields: Record<string, unknown>, msg: string): void {
    const t = this.sampler.take(key);
    if (t.log) this.log.warn({ ...fields, ...(t.suppressed ? { suppressed: t.suppressed } : {}) }, msg);
  }

  /** How much the journal holds and what it has written (for /metrics and the bench). */
  journalStats(): NotifyJournal['stats'] & NotifyJournal['size'] {
    return { ...this.journal.stats, ...this.journal.size };
  }

  /** Recent notifications and where each got, newest first. */
  list(limit: number): { schema: 1; notifications: Record<string, unknown>[] } {
    return { schema: 1, notifications: this.journal.recent(limit).map(entryDoc) };
  }

  counters(sink: string): SinkCounters {
    let c = this.stats.get(sink);
    if (!c) this.stats.set(sink, (c = { sent: 0, failed: 0, retried: 0, dropped: 0, skipped: { answered: 0, looking: 0, cooldown: 0, unsent: 0 } }));
    return c;
  }

  /** Record a delivery step; only steps that change what a restart would do are journaled. */
  note(id: string, sink: string, state: DeliveryState, attempts: number, error: string | null, durable: boolean): void {
    // Shared, every step is written: each hub lists what the others did.
    if (durable || this.shared) {
      this.journal.mark(id, sink, state, attempts, error, this.clock()).catch((e: unknown) => {
        this.log.error({ err: (e as Error).message }, 'notification journal write failed');
      });
      return;
    }
    const d = this.journal.get(id)?.sinks.get(sink);
    if (d) Object.assign(d, { state, attempts, last_error: error, at: this.clock() });
  }

  later(fn: () => void, ms: number): ReturnType<typeof setTimeout> {
    const t = setTimeout(fn, ms);
    t.unref?.();
    return t;
  }

  metricsText(): string {
    const names = [...new Set([...this.sinks.map((s) => s.name), ...this.stats.keys()])].sort();
    const esc = (v: string) => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"');
    const out: string[] = [];
    const metric = (name: string, help: string, pick: (c: SinkCounters) => number) => {
      out.push(`# HELP ${name} ${help}`, `# TYPE ${name} counter`);
      for (const s of names) out.push(`${name}{sink="${esc(s)}"} ${pick(this.counters(s))}`);
    };
    metric('tma_hub_notify_sent_total', 'Notifications delivered, per sink.', (c) => c.sent);
    metric('tma_hub_notify_failed_total', 'Delivery attempts that failed, per sink.', (c) => c.failed);
    metric('tma_hub_notify_retried_total', 'Delivery retries scheduled, per sink.', (c) => c.retried);
    metric('tma_hub_notify_dropped_total', 'Notifications given up after retrying, per sink.', (c) => c.dropped);
    out.push(...skippedLines(names.map((n) => [esc(n), this.counters(n).skipped])));
    out.push('# HELP tma_hub_notify_accepted_total Notifications accepted from collectors.', '# TYPE tma_hub_notify_accepted_total counter');
    out.push(`tma_hub_notify_accepted_total ${this.accepted}`);
    out.push('# HELP tma_hub_notify_duplicates_total Notifications received again and dropped as repeats.', '# TYPE tma_hub_notify_duplicates_total counter');
    out.push(`tma_hub_notify_duplicates_total ${this.duplicates}`);
    out.push(
      "# HELP tma_hub_notify_refused_total Notify frames refused over a host's budget (not acknowledged).",
      '# TYPE tma_hub_notify_refused_total counter',
    );
    out.push(`tma_hub_notify_refused_total{reason="budget"} ${this.refused}`);
    const j = this.journal.size;
    out.push('# HELP tma_hub_notify_journal_entries Notifications the journal holds.', '# TYPE tma_hub_notify_journal_entries gauge');
    out.push(`tma_hub_notify_journal_entries ${j.entries}`);
    out.push('# HELP tma_hub_notify_journal_unfinished Notifications some sink still owes.', '# TYPE tma_hub_notify_journal_unfinished gauge');
    out.push(`tma_hub_notify_journal_unfinished ${j.unfinished}`);
    return `${out.join('\n')}\n`;
  }

  close(): void {
    for (const q of this.queues.values()) q.stop();
    this.shared?.close();
    this.journal.close();
  }
}

function ordered(e: FleetNotification): FleetNotification {
  const out: Record<string, unknown> = {};
  for (const k of FLEET_NOTIFICATION_KEYS) out[k] = e[k] ?? null;
  return out as FleetNotification;
}

function entryDoc(e: JournalEntry): Record<string, unknown> {
  const { id, host, received_ms, ...rest } = e.n;
  const delivery: Record<string, unknown> = {};
  for (const [name, d] of e.sinks) delivery[name] = { state: d.state, attempts: d.attempts, last_error: d.last_error, at_ms: d.at };
  return { id, host, ...rest, received_ms, delivery };
}
