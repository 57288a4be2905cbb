// The owning hub's writes: a held host's rows and status, as they stand in its store, copied into
// the buckets. Changes are gathered per host and written together; rows first, then the status
// naming their servers, so a follower never sees a status for rows that are not there yet. A row
// is written only when its held entry changed (unchanged rows keep their entry), and a status
// that differs only in its clocks is refreshed once a second, not on every frame.
//
// Marks are gathered for a short window before a run, and while a run is in flight: a row that
// changes ten times in the window is written once, as it stands at the end. Within a run every
// put is sent before any is awaited (the client pipelines them on one connection).

import type { KV } from '@nats-io/kv';
import type { Logger } from 'pino';
import type { HostRecord } from '../store/host-record.js';
import type { RowEntry } from '../store/pieces.js';
import { HOSTS_BUCKET, ROWS_BUCKET, rowKey, statusKey } from './keys.js';
import type { AckedPublisher } from './acked-publish.js';
import { hostWire, wireShape, type HostWire, type RowWire } from './wire.js';
import type { ProtocolRow } from '../../shared/row.js';

const CLOCK_REFRESH_MS = 1000;
/** How long changes gather before they are written: small against the 250 ms edge budget. */
export const WRITE_WINDOW_MS = 25;
const RETRY_MS = 500;
/** Stands for a row another hub wrote: never the same entry as one this hub holds. */
const STRANGER = {} as RowEntry;

interface Written {
  rows: Map<string, RowEntry>;
  shape: string | null;
  at: number;
}

export class OwnedWriter {
  private readonly written = new Map<string, Written>();
  private readonly dirty = new Set<string>();
  private readonly refreshing = new Set<string>();
  private readonly after = new Map<string, (() => void)[]>();
  private scheduled = false;
  private running = false;
  private closed = false;

  constructor(
    private readonly rows: KV,
    private readonly hosts: KV,
    private readonly hubId: string,
    private readonly read: (host: string) => HostRecord | undefined,
    /** Only the claim's holder writes. */
    private readonly mayWrite: (host: string) => boolean,
    /** The row keys the bucket holds for a host now (another hub may have written them). */
    private readonly heldKeys: (host: string) => Iterable<string>,
    private readonly clock: () => number,
    private readonly logger: Logger,
    /** Puts as publishes acked on one inbox (acked-publish.ts); without it, the KV client's own. */
    private readonly publisher?: AckedPublisher,
    /** The row as written: sealed with the fleet's row key (row-check.ts), so followers can check it. */
    private readonly seal: (key: string, incarnation: string, row: ProtocolRow) => RowWire = (_k, i, r) => ({ i, r }),
    /** The status as written: sealed the same way (status-check.ts). */
    private readonly sealStatus: (key: string, wire: HostWire) => object = (_k, w) => w,
  ) {}

  private putRow(key: string, text: string): Promise<unknown> {
    return this.publisher ? this.publisher.publish(`$KV.${ROWS_BUCKET}.${key}`, text) : this.rows.put(key, text);
  }

  private putStatus(key: string, text: string): Promise<unknown> {
    return this.publisher ? this.publisher.publish(`$KV.${HOSTS_BUCKET}.${key}`, text) : this.hosts.put(key, text);
  }

  /** The host changed; `then` runs once what it holds now is written. */
  mark(host: string, then?: () => void): void {
    this.dirty.add(host);
    if (then) this.after.set(host, [...(this.after.get(host) ?? []), then]);
    this.schedule(WRITE_WINDOW_MS);
  }

  private schedule(ms: number): void {
    if (this.scheduled || this.closed) return;
    this.scheduled = true;
    const t = setTimeout(() => {
      this.scheduled = false;
      void this.run();
    }, ms);
    t.unref();
  }

  /** Whether every marked change is written. */
  get idle(): boolean {
    return this.dirty.size === 0 && !this.running;
  }

  private async run(): Promise<void> {
    if (this.running) return;
    this.running = true;
    let failed = false;
    try {
      while (this.dirty.size > 0 && !this.closed) {
        const hosts = [...this.dirty];
        this.dirty.clear();
        const results = await Promise.all(
          hosts.map((h) =>
            this.write(h).then(
              () => true,
              (e: unknown) => this.failed(h, e as Error),
            ),
          ),
        );
        if (results.includes(false)) failed = true;
        if (failed) break;
      }
    } finally {
      this.running = false;
    }
    if (failed) this.schedule(RETRY_MS);
    else if (this.dirty.size > 0) this.schedule(WRITE_WINDOW_MS);
  }

  private failed(host: string, e: Error): false {
    this.dirty.add(host);
    this.logger.warn({ host, err: e.message }, 'writing a host to NATS failed; retrying');
    return false;
  }

  private async write(host: string): Promise<void> {
    const h = this.read(host);
    if (!h || !this.mayWrite(host)) {
      this.runAfter(host);
      return;
    }
    let w = this.written.get(host);
    if (!w) {
      // A host taken over from another hub: whatever it left is replaced, its extra rows deleted.
      w = { rows: new Map([...this.heldKeys(host)].map((k) => [k, STRANGER])), shape: null, at: 0 };
      this.written.set(host, w);
    }
    const now = new Map<string, RowEntry>();
    const puts: Promise<unknown>[] = [];
    for (const [server, slot] of h.servers) {
      for (const [pane, e] of slot.rows) {
        const key = rowKey(host, server, pane);
        now.set(key, e);
        if (w.rows.get(key) === e) continue;
        const value = this.seal(key, slot.incarnation, e.row);
        puts.push(this.putRow(key, JSON.stringify(value)));
      }
    }
    for (const key of w.rows.keys()) if (!now.has(key)) puts.push(this.rows.delete(key));
    const wire = hostWire(h, this.hubId);
    const shape = wireShape(wire);
    const at = this.clock();
    await Promise.all(puts);
    w.rows = now;
    if (shape !== w.shape || at - w.at >= CLOCK_REFRESH_MS) {
      const key = statusKey(host);
      await this.putStatus(key, JSON.stringify(this.sealStatus(key, wire)));
      w.shape = shape;
      w.at = at;
    } else if (!this.refreshing.has(host)) {
      // Only the clocks moved: they go out with the next refresh.
      this.refreshing.add(host);
      const t = setTimeout(
        () => {
          this.refreshing.delete(host);
          this.mark(host);
        },
        CLOCK_REFRESH_MS - (at - w.at),
      );
      t.unref();
    }
    this.runAfter(host);
  }

  private runAfter(host: string): void {
    const cbs = this.after.get(host);
    if (!cbs) return;
    this.after.delete(host);
    cbs.forEach((cb) => cb());
  }

  /** What was written for a host no longer counts (it moved away, or was forgotten). */
  forget(host: string): void {
    this.written.delete(host);
  }

  close(): void {
    this.closed = true;
  }
}
