// Fleet streams: the document first, then on change either documents or edges. Store changes are
// coalesced so a burst of frames costs one rebuild per subscriber, and a reader that falls behind
// is dropped instead of slowing the hub or anyone else.

import type { Logger } from 'pino';
import { diffEdges } from '../shared/edges.js';
import type { FleetRow } from '../shared/fleet.js';
import type { Selector } from '../shared/selectors.js';
import type { HubMetrics } from './metrics.js';
import type { StreamSink } from './stream-sinks.js';
import type { FleetStore } from './store.js';

interface Subscriber {
  id: number;
  sink: StreamSink;
  selector: Selector;
  events: boolean;
  /** Last document text sent (documents mode) or last rows seen (edges mode). */
  lastText: string | null;
  lastRows: readonly FleetRow[];
  alive: boolean;
}

export interface StreamHubOptions {
  coalesceMs: number;
  keepaliveMs: number;
  logger: Logger;
  metrics: HubMetrics;
  clock?: () => number;
}

export class StreamHub {
  private readonly subs = new Map<number, Subscriber>();
  private nextId = 1;
  private flushTimer: NodeJS.Timeout | null = null;
  /** Running while a flush's coalescing spell lasts; changes meanwhile only mark `pending`. */
  private cooling: NodeJS.Timeout | null = null;
  private pending = false;
  private readonly keepaliveTimer: NodeJS.Timeout;
  private readonly unlisten: () => void;
  private readonly clock: () => number;

  constructor(private readonly store: FleetStore, private readonly o: StreamHubOptions) {
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
   * behind); the current document goes out at once. Returns the stream's id.
   */
  add(make: (slow: (reason: string) => void) => StreamSink, selector: Selector, events: boolean): number {
    const id = this.nextId++;
    const sink = make((reason) => this.slow(id, reason));
    const doc = this.store.document(selector);
    const text = JSON.stringify(doc);
    const sub: Subscriber = { id, sink, selector, events, lastText: text, lastRows: doc.agents, alive: true };
    this.subs.set(id, sub);
    this.o.metrics.subscriberCount(sink.kind, 1);
    sink.onGone(() => this.remove(sub));
    this.o.logger.info({ subscriber: id, transport: sink.kind, events }, 'subscriber joined');
    sink.write(text);
    return id;
  }

  /** The sink reported its reader as behind. */
  slow(id: number, reason: string): void {
    const sub = this.subs.get(id);
    if (!sub || !sub.alive) return;
    this.o.metrics.subscriberDropped(sub.sink.kind);
    this.o.logger.warn({ subscriber: id, transport: sub.sink.kind, reason }, 'subscriber too slow; disconnected');
    this.remove(sub);
    sub.sink.kick(reason);
  }

  private remove(sub: Subscriber): void {
    if (!sub.alive) return;
    sub.alive = false;
    this.subs.delete(sub.id);
    this.o.metrics.subscriberCount(sub.sink.kind, -1);
  }

  /**
   * The first change after a quiet spell goes out on the next turn of the event loop (a hook's
   * edge should not wait); changes arriving within `coalesceMs` after a flush are gathered into
   * one flush at the end of that spell, so a burst still costs one rebuild per subscriber.
   */
  private schedule(): void {
    if (this.subs.size === 0) return;
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
    const at = this.clock();
    // Subscribers with the same selector share one filtered document per flush.
    const docs = new Map<string, { rows: readonly FleetRow[]; text: string }>();
    for (const sub of [...this.subs.values()]) {
      if (!sub.alive) continue;
      const key = JSON.stringify(sub.selector);
      let d = docs.get(key);
      if (!d) {
        const doc = this.store.document(sub.selector);
        d = { rows: doc.agents, text: JSON.stringify(doc) };
        docs.set(key, d);
      }
      if (sub.events) {
        const edges = diffEdges(sub.lastRows, d.rows, at);
        sub.lastRows = d.rows;
        for (const e of edges) {
          if (!sub.alive) break;
          sub.sink.write(JSON.stringify(e));
        }
      } else if (d.text !== sub.lastText) {
        sub.lastText = d.text;
        sub.sink.write(d.text);
      }
    }
  }

  close(): void {
    this.unlisten();
    clearInterval(this.keepaliveTimer);
    if (this.flushTimer) clearTimeout(this.flushTimer);
    if (this.cooling) clearTimeout(this.cooling);
    for (const sub of [...this.subs.values()]) {
      this.remove(sub);
      sub.sink.end();
    }
  }
}
