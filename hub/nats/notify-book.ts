// The notification journal on NATS, the same on every hub: what was accepted is the stream
// (`tma-notify`, followed here by an ordered consumer), how far each got with each sink is the
// `tma-notify-out` bucket (followed by a watch). A hub writes a delivery step to the bucket and
// applies it at once; every other hub sees it through its watch, so `GET /v1/notifications`
// reads the same on each. The messages this hub took from a sink's consumer are held here until
// that sink's delivery of them is settled in the bucket: only then are they acknowledged, so a
// hub that dies holding them leaves them to be redelivered to another.

import type { Consumer, ConsumerMessages, JetStreamClient, JsMsg } from '@nats-io/jetstream';
import { DeliverPolicy } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import type { Logger } from 'pino';
import type { NotifyJournalStore } from '../notify/hub-notifier.js';
import { blockedIdOf, sinkWants } from '../notify/sink-queue.js';
import type { NotifySinkConfig } from '../notify/sink-config.js';
import { JOURNAL_KEEP, type DeliveryState, type HubNotification, type JournalEntry, type JournalStats, type SinkDelivery } from '../notify/journal.js';
import { follow, type Following } from './follow.js';
import { notifyOutKey, NOTIFY_STREAM } from './keys.js';
import { withBackoff } from './retry.js';

/** What the bucket holds per (sink, notification). */
interface OutWire {
  id: string;
  sink: string;
  state: DeliveryState;
  attempts: number;
  last_error: string | null;
  at: number | null;
  delivery: string | null;
}

type Entry = JournalEntry & { seq: number };

const FINAL = new Set<DeliveryState>(['sent', 'failed', 'skipped']);
/** A held message is told "still working" this often: well within the consumers' ack wait. */
export const NOTIFY_ACK_WAIT_MS = 10_000;
const WORKING_EVERY_MS = NOTIFY_ACK_WAIT_MS / 4;
const READY_TIMEOUT_MS = 30_000;
const dec = new TextDecoder();
const heldKey = (sink: string, id: string) => `${sink}\n${id}`;

export class NatsNotifyBook implements NotifyJournalStore {
  private readonly entries = new Map<string, Entry>();
  /** Every delivery step known, by notification id: an entry's `sinks` is this map's value. */
  private readonly out = new Map<string, Map<string, SinkDelivery>>();
  private readonly held = new Map<string, JsMsg>();
  private following: Following | null = null;
  private messages: ConsumerMessages | null = null;
  private readonly workingTimer: ReturnType<typeof setInterval>;
  private closed = false;
  readonly stats: JournalStats = { lines: 0, appendWrites: 0, fsyncs: 0, compactions: 0, compactedLines: 0 };
  onDrop: (e: JournalEntry, sinks: string[]) => void = () => undefined;
  onError: (e: Error) => void = () => undefined;
  /** Today's sink set: what a notification from the stream is owed to (the notifier's rule). */
  sinks: NotifySinkConfig[] = [];

  constructor(
    private readonly js: JetStreamClient,
    private readonly kv: KV,
    private readonly log: Logger,
    private readonly keep = JOURNAL_KEEP,
  ) {
    // Held messages must not be redelivered elsewhere while this hub still works on them (a
    // dwell, a retry's backoff); a hub that dies stops saying so, and they go to another.
    this.workingTimer = setInterval(() => {
      for (const m of this.held.values()) m.working();
    }, WORKING_EVERY_MS);
    this.workingTimer.unref();
  }

  /** Follow the stream's last `keep` messages and the whole outcome bucket; resolves once caught up. */
  async start(): Promise<void> {
    this.following = await follow(this.kv, { onEntry: (_k, v) => v && this.applyOut(JSON.parse(dec.decode(v)) as OutWire) }, this.log, 'notify outcomes');
    // A stream just made, or one electing a leader, may not answer at once.
    const until = Date.now() + READY_TIMEOUT_MS;
    const jsm = await this.js.jetstreamManager();
    const info = await withBackoff(`stream ${NOTIFY_STREAM}`, () => jsm.streams.info(NOTIFY_STREAM), until);
    const last = info.state.last_seq;
    const start = Math.max(info.state.first_seq, last - this.keep + 1, 1);
    const oc: Consumer = await withBackoff(
      `stream ${NOTIFY_STREAM} follower`,
      () => this.js.consumers.get(NOTIFY_STREAM, { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: start }),
      until,
    );
    this.messages = await oc.consume();
    let caughtUp!: () => void;
    const ready = new Promise<void>((ok) => (caughtUp = ok));
    if (last === 0 || info.state.messages === 0) caughtUp();
    void (async () => {
      for await (const m of this.messages!) {
        try {
          this.accepted(m.json<HubNotification>(), m.seq);
        } catch (e) {
          this.log.warn({ err: (e as Error).message, seq: m.seq }, 'notification in the stream not applied');
        }
        if (m.seq >= last) caughtUp();
      }
    })().catch((e: unknown) => this.log.warn({ err: (e as Error).message }, 'notification stream follow ended'));
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.all([
      this.following.ready,
      Promise.race([
        ready,
        new Promise<never>((_ok, fail) => {
          timer = setTimeout(() => fail(new Error(`notification stream: not caught up within ${READY_TIMEOUT_MS} ms`)), READY_TIMEOUT_MS);
        }),
      ]).finally(() => clearTimeout(timer)),
    ]);
  }

  /** A notification from the stream (any hub accepted it), or one a sink's consumer handed over first. */
  accepted(n: HubNotification, seq: number): Entry {
    const had = this.entries.get(n.id);
    if (had) {
      had.seq = seq;
      return had;
    }
    let sinks = this.out.get(n.id);
    if (!sinks) this.out.set(n.id, (sinks = new Map<string, SinkDelivery>()));
    for (const s of this.targets(n)) if (!sinks.has(s)) sinks.set(s, { state: 'pending', attempts: 0, last_error: null, at: null, delivery: null });
    const e: Entry = { n, sinks, seq };
    this.entries.set(n.id, e);
    this.trim();
    return e;
  }

  private targets(n: HubNotification): string[] {
    return this.sinks.filter((s) => sinkWants(s, n, this.entries.get(blockedIdOf(n))?.sinks.has(s.name) ?? false)).map((s) => s.name);
  }

  /** A sink's consumer handed this hub `n`: it is owed to that sink until settled. */
  hold(sink: string, n: HubNotification, seq: number, m: JsMsg): void {
    const e = this.accepted(n, seq);
    if (!e.sinks.has(sink)) e.sinks.set(sink, { state: 'pending', attempts: 0, last_error: null, at: null, delivery: null });
    this.held.get(heldKey(sink, n.id))?.working();
    this.held.set(heldKey(sink, n.id), m);
  }

  isHeld(sink: string, id: string): boolean {
    return this.held.has(heldKey(sink, id));
  }

  /** The bucket's word on one delivery (not the watch's, which may lag a redelivery). */
  async outcome(sink: string, id: string): Promise<SinkDelivery | null> {
    const got = await this.kv.get(notifyOutKey(sink, id));
    if (!got || got.operation !== 'PUT') return this.out.get(id)?.get(sink) ?? null;
    return this.applyOut(got.json<OutWire>());
  }

  /** Give every held message back at once (closing, or the sink set changed): another take picks it up. */
  release(sink?: string, id?: string): void {
    for (const [k, m] of this.held) {
      if (sink !== undefined && (id === undefined ? !k.startsWith(`${sink}\n`) : k !== heldKey(sink, id))) continue;
      m.nak();
      this.held.delete(k);
    }
  }

  has(id: string): boolean {
    return this.entries.has(id);
  }

  get(id: string): JournalEntry | undefined {
    return this.entries.get(id);
  }

  get size(): { entries: number; unfinished: number; fileLines: number } {
    return { entries: this.entries.size, unfinished: this.unfinished().length, fileLines: 0 };
  }

  /** Newest first, in the stream's order: the same on every hub. */
  recent(limit: number): JournalEntry[] {
    return [...this.entries.values()].sort((a, b) => b.seq - a.seq).slice(0, limit);
  }

  unfinished(): JournalEntry[] {
    return [...this.entries.values()].filter((e) => [...e.sinks.values()].some((d) => d.state === 'pending'));
  }

  /** Not used on NATS (the notifier publishes instead); kept for the interface. */
  accept(n: HubNotification): Promise<JournalEntry> {
    return Promise.resolve(this.accepted(n, Number.MAX_SAFE_INTEGER));
  }

  batch(sink: string, delivery: string, ids: string[]): Promise<void> {
    return this.writeAll(sink, ids, { delivery });
  }

  done(sink: string, delivery: string, ids: string[], state: DeliveryState, attempts: number, error: string | null, at: number): Promise<void> {
    return this.writeAll(sink, ids, { delivery, state, attempts, last_error: error, at });
  }

  mark(id: string, sink: string, state: DeliveryState, attempts: number, error: string | null, at: number): Promise<void> {
    return this.writeAll(sink, [id], { state, attempts, last_error: error, at });
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.workingTimer);
    this.release();
    this.following?.stop();
    void this.messages?.close();
  }

  /** Apply at once, then write; a settled delivery's message is acknowledged once written. */
  private async writeAll(sink: string, ids: string[], patch: Partial<SinkDelivery>): Promise<void> {
    await Promise.all(
      ids.map(async (id) => {
        const d = this.out.get(id)?.get(sink);
        if (!d) return;
        Object.assign(d, patch);
        const w: OutWire = { id, sink, state: d.state, attempts: d.attempts, last_error: d.last_error, at: d.at, delivery: d.delivery ?? null };
        await this.kv.put(notifyOutKey(sink, id), JSON.stringify(w));
        this.stats.lines++;
        if (!FINAL.has(w.state)) return;
        const k = heldKey(sink, id);
        this.held.get(k)?.ack();
        this.held.delete(k);
      }),
    );
  }

  private applyOut(w: OutWire): SinkDelivery {
    let sinks = this.out.get(w.id);
    if (!sinks) this.out.set(w.id, (sinks = new Map<string, SinkDelivery>()));
    const d: SinkDelivery = { state: w.state, attempts: w.attempts, last_error: w.last_error, at: w.at, delivery: w.delivery };
    const had = sinks.get(w.sink);
    if (had) Object.assign(had, d);
    else sinks.set(w.sink, d);
    return had ?? d;
  }

  /** At most `keep` entries (the oldest go), and no outcomes of entries gone long ago. */
  private trim(): void {
    if (this.entries.size <= this.keep) return;
    // Entries arrive in (nearly) the stream's order: the first in the map are the oldest.
    const oldest = [...this.entries.values()].slice(0, this.entries.size - this.keep);
    for (const e of oldest) {
      this.entries.delete(e.n.id);
      this.out.delete(e.n.id);
    }
    if (this.out.size > 4 * this.keep) for (const id of this.out.keys()) if (!this.entries.has(id)) this.out.delete(id);
  }
}
