// Fleet streams: the document first, then on change one of three things, by mode:
//   documents — the whole (filtered) document again (the original stream);
//   events    — an edge line per class change;
//   changes   — a `changes` line carrying only the rows and hosts that moved (the page uses it).
// Store changes are coalesced, and a flush works from the rows that changed, never the whole
// fleet: each line is encoded once per selector and the same text goes to every subscriber that
// shares it. A documents or events reader that falls behind is dropped; a changes reader is
// paused instead and, once it has caught up, sent a fresh document to start again from.

import type { Logger } from 'pino';
import { edge } from '../../shared/edges.js';
import { compareFleetRows, selectRow, type Selector } from '../../shared/selectors.js';
import { classOf, type StateClass } from '../../shared/tokens.js';
import type { HubMetrics } from '../metrics.js';
import { SharedLines, type StreamSink } from './stream-sinks.js';
import type { FleetJournal, FleetReads, RowChange, StoreChanges } from '../store/fleet-store.js';

export type StreamMode = 'documents' | 'events' | 'changes';

interface Subscriber {
  id: number;
  sink: StreamSink;
  selector: Selector;
  selectorKey: string;
  mode: StreamMode;
  /** Last document sent (documents mode). */
  lastText: Buffer | string | null;
  /** Changes mode: the reader fell behind; nothing is sent until it catches up. */
  behind: boolean;
  alive: boolean;
}

export interface StreamHubOptions {
  coalesceMs: number;
  keepaliveMs: number;
  logger: Logger;
  metrics: HubMetrics;
  clock?: () => number;
}

/** How often a paused changes reader is checked for having caught up. */
const CATCH_UP_CHECK_MS = 200;

export class StreamHub {
  private readonly subs = new Map<number, Subscriber>();
  private nextId = 1;
  private flushTimer: NodeJS.Timeout | null = null;
  /** Running while a flush's coalescing spell lasts; changes meanwhile only mark `pending`. */
  private cooling: NodeJS.Timeout | null = null;
  private pending = false;
  /** The store changed since the last flush. */
  private dirty = false;
  private catchUpTimer: NodeJS.Timeout | null = null;
  private readonly keepaliveTimer: NodeJS.Timeout;
  private readonly unlisten: () => void;
  private readonly clock: () => number;

  constructor(
    private readonly store: FleetReads & FleetJournal,
    private readonly o: StreamHubOptions,
  ) {
    this.clock = o.clock ?? Date.now;
    this.unlisten = store.onChange(() => this.schedule());
    this.keepaliveTimer = setInterval(() => {
      for (const s of this.subs.values()) s.sink.keepalive();
    }, o.keepaliveMs);
    this.keepaliveTimer.unref();
  }

  get size(): number {
    return this.subs.size;
  }

  /**
   * Start a stream on the sink `make` builds (handing it the callback for a reader that falls
   * behind); the current document goes out at once. `events` (a boolean) is the older spelling
   * of the mode. Returns the stream's id.
   */
  add(make: (slow: (reason: string) => void) => StreamSink, selector: Selector, mode: StreamMode | boolean): number {
    const m: StreamMode = mode === true ? 'events' : mode === false ? 'documents' : mode;
    // Whatever changed before this reader joined goes to the others first; its document has it.
    if (this.dirty && this.subs.size > 0) this.flush();
    if (this.subs.size === 0) this.store.setJournaling(true);
    this.dirty = false;
    const id = this.nextId++;
    const sink = make((reason) => this.slow(id, reason));
    // The parts are shared with every reader joining at this version: no copy of the fleet per reader.
    const parts = this.store.documentParts(selector);
    const sub: Subscriber = {
      id,
      sink,
      selector,
      selectorKey: JSON.stringify(selector),
      mode: m,
      lastText: m === 'documents' ? Buffer.concat(parts) : null,
      behind: false,
      alive: true,
    };
    this.subs.set(id, sub);
    this.o.metrics.subscriberCount(sink.kind, 1);
    sink.onGone(() => this.remove(sub));
    this.o.logger.info({ subscriber: id, transport: sink.kind, mode: m }, 'subscriber joined');
    sink.write(parts);
    return id;
  }

  /** The sink reported its reader as behind. */
  slow(id: number, reason: string): void {
    const sub = this.subs.get(id);
    if (!sub || !sub.alive) return;
    if (sub.mode === 'changes') {
      if (sub.behind) return;
      sub.behind = true;
      this.o.logger.info({ subscriber: id, transport: sub.sink.kind, reason }, 'subscriber behind; paused until it catches up');
      this.watchCatchUp();
      return;
    }
    this.o.metrics.subscriberDropped(sub.sink.kind);
    this.o.logger.warn({ subscriber: id, transport: sub.sink.kind, reason }, 'subscriber too slow; disconnected');
    this.remove(sub);
    sub.sink.kick(reason);
  }

  private watchCatchUp(): void {
    if (this.catchUpTimer) return;
    this.catchUpTimer = setInterval(() => {
      let waiting = 0;
      for (const sub of this.subs.values()) {
        if (!sub.behind) continue;
        if (!sub.sink.caughtUp()) {
          waiting++;
          continue;
        }
        sub.behind = false;
        this.o.logger.info({ subscriber: sub.id }, 'subscriber caught up; fresh document sent');
        sub.sink.write(this.store.documentParts(sub.selector));
      }
      if (waiting === 0 && this.catchUpTimer) {
        clearInterval(this.catchUpTimer);
        this.catchUpTimer = null;
      }
    }, CATCH_UP_CHECK_MS);
    this.catchUpTimer.unref();
  }

  private remove(sub: Subscriber): void {
    if (!sub.alive) return;
    sub.alive = false;
    this.subs.delete(sub.id);
    this.o.metrics.subscriberCount(sub.sink.kind, -1);
    if (this.subs.size === 0) this.store.setJournaling(false);
  }

  /**
   * The first change after a quiet spell goes out on the next turn of the event loop (a hook's
   * edge should not wait); changes arriving within `coalesceMs` after a flush are gathered into
   * one flush at the end of that spell, so a burst still costs one flush.
   */
  private schedule(): void {
    if (this.subs.size === 0) return;
    this.dirty = true;
    if (this.flushTimer || this.cooling) {
      this.pending = true;
      return;
    }
    this.flushTimer = setTimeout(() => {
      this.flushTimer = null;
      this.flushAndCool();
    }, 0);
  }

  private flushAndCool(): void {
    this.pending = false;
    this.flush();
    this.cooling = setTimeout(() => {
      this.cooling = null;
      if (this.pending) this.flushAndCool();
    }, this.o.coalesceMs);
  }

  private flush(): void {
    this.dirty = false;
    const changes = this.store.takeChanges();
    if (changes.rows.length === 0 && changes.hosts.length === 0) return;
    const plan = new FlushPlan(this.store, changes, this.clock());
    // Subscribers with the same mode and selector share one encoding per flush.
    const lines = new Map<string, SharedLines>();
    for (const sub of [...this.subs.values()]) {
      if (!sub.alive || sub.behind) continue;
      const key = `${sub.mode}\u0000${sub.selectorKey}`;
      let shared = lines.get(key);
      if (!shared) {
        shared = new SharedLines(plan.linesFor(sub.mode, sub.selector));
        lines.set(key, shared);
      }
      const out = shared.lines;
      if (out.length === 0) continue;
      if (sub.mode === 'documents') {
        const text = out[0] as string | Buffer;
        if (sameBytes(text, sub.lastText)) continue;
        sub.lastText = text;
      } else if (sub.sink.writeShared) {
        sub.sink.writeShared(shared);
        continue;
      }
      const send = () => {
        for (const line of out) {
          if (!sub.alive || sub.behind) break;
          sub.sink.write(line);
        }
      };
      if (out.length > 1 && sub.sink.batch) sub.sink.batch(send);
      else send();
    }
  }

  close(): void {
    this.unlisten();
    clearInterval(this.keepaliveTimer);
    if (this.flushTimer) clearTimeout(this.flushTimer);
    if (this.cooling) clearTimeout(this.cooling);
    if (this.catchUpTimer) clearInterval(this.catchUpTimer);
    for (const sub of [...this.subs.values()]) {
      this.remove(sub);
      sub.sink.end();
    }
  }
}

/** One flush's changed rows, ordered once, with each line encoded at most once. */
class FlushPlan {
  /** Rows present now, in fleet order: appearances and class changes come out in this order. */
  private readonly present: RowChange[];
  /** Rows that were present before, in their former order: departures come out in this order. */
  private readonly former: RowChange[];
  private readonly edgeText = new Map<string, string>();

  constructor(
    private readonly store: FleetReads,
    private readonly changes: StoreChanges,
    private readonly at: number,
  ) {
    this.present = changes.rows.filter((c) => c.after).sort((a, b) => compareFleetRows(a.after!.entry.row, b.after!.entry.row));
    this.former = changes.rows.filter((c) => c.before).sort((a, b) => compareFleetRows(a.before!.entry.row, b.before!.entry.row));
  }

  linesFor(mode: StreamMode, sel: Selector): (string | Buffer)[] {
    if (mode === 'documents') return [this.store.documentBytes(sel)];
    if (mode === 'events') return this.edges(sel);
    return this.changesLine(sel);
  }

  private edges(sel: Selector): string[] {
    const out: string[] = [];
    const cls = (seen: RowChange['before'], match: boolean): StateClass | '' => (seen && match ? classOf(seen.entry.row.state, seen.entry.row.attention) : '');
    const emit = (c: RowChange, departure: boolean) => {
      const from = cls(c.before, c.before !== null && selectRow(sel, c.before.entry.row));
      const to = cls(c.after, c.after !== null && selectRow(sel, c.after.entry.row));
      if (from === to || (to === '') !== departure) return;
      const k = `${c.key}\u0000${from}\u0000${to}`;
      let t = this.edgeText.get(k);
      if (t === undefined) {
        t = JSON.stringify(edge((departure ? c.before : c.after)!.entry.row, from, to, this.at));
        this.edgeText.set(k, t);
      }
      out.push(t);
    };
    for (const c of this.present) emit(c, false);
    for (const c of this.former) emit(c, true);
    return out;
  }

  private changesLine(sel: Selector): string[] {
    const upserts: string[] = [];
    const removals: string[] = [];
    for (const c of this.present) if (selectRow(sel, c.after!.entry.row)) upserts.push(this.store.rowText(c.after!));
    for (const c of this.former) {
      if (!selectRow(sel, c.before!.entry.row)) continue;
      if (c.after && selectRow(sel, c.after.entry.row)) continue;
      const r = c.before!.entry.row;
      removals.push(JSON.stringify({ host: r.host, server: r.server, pane: r.pane }));
    }
    const hosts: string[] = [];
    const gone: string[] = [];
    for (const h of this.changes.hosts) {
      if (sel.host !== null && h !== sel.host) continue;
      const t = this.store.hostStatusText(h);
      if (t === null) gone.push(JSON.stringify(h));
      else hosts.push(t);
    }
    if (upserts.length + removals.length + hosts.length + gone.length === 0) return [];
    return [
      `{"schema":1,"type":"changes","at_ms":${this.at},"upserts":[${upserts.join(',')}],"removals":[${removals.join(',')}],` +
        `"hosts":[${hosts.join(',')}],"hosts_gone":[${gone.join(',')}]}`,
    ];
  }
}

function sameBytes(a: string | Buffer, b: string | Buffer | null): boolean {
  if (b === null) return false;
  if (typeof a === 'string' || typeof b === 'string') return String(a) === String(b);
  return a.equals(b);
}
