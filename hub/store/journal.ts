// The change journal: which rows changed since the streams last took them, with what each was
// before its first change. Off while nobody subscribes, so an unwatched hub keeps no journal.

import { rowKey } from '../../shared/edges.js';
import type { RowSeen, StoreChanges } from './fleet-store.js';
import { isStale, type HostRecord } from './host-record.js';
import { sameEntry } from './pieces.js';

export class ChangeJournal {
  /** Rows changed since the last `take`, with what they were before; null while nobody reads. */
  private rows: Map<string, { host: string; server: string; pane: string; before: RowSeen | null }> | null = null;
  private readonly hosts = new Set<string>();

  get on(): boolean {
    return this.rows !== null;
  }

  set(on: boolean): void {
    if (on && !this.rows) this.rows = new Map();
    if (!on) this.rows = null;
    this.hosts.clear();
  }

  /** A host's status changed, or it came or went. */
  noteHost(host: string): void {
    if (this.rows) this.hosts.add(host);
  }

  /** Remember a row's current form before it changes (first change since the last take wins). */
  noteRow(h: HostRecord, server: string, pane: string): void {
    if (!this.rows) return;
    const key = rowKey({ host: h.host, server, pane });
    if (this.rows.has(key)) return;
    const entry = h.servers.get(server)?.rows.get(pane);
    this.rows.set(key, { host: h.host, server, pane, before: entry ? { entry, stale: isStale(h) } : null });
  }

  /** Before anything that may change all of a host's rows or their staleness. */
  noteHostRows(h: HostRecord): void {
    if (!this.rows) return;
    for (const [server, slot] of h.servers) for (const pane of slot.rows.keys()) this.noteRow(h, server, pane);
  }

  /** What changed since the previous call: only rows whose text or staleness really moved. */
  take(hostOf: (host: string) => HostRecord | undefined): StoreChanges {
    const out: StoreChanges = { rows: [], hosts: [...this.hosts] };
    this.hosts.clear();
    if (!this.rows) return out;
    for (const [key, j] of this.rows) {
      const h = hostOf(j.host);
      const entry = h?.servers.get(j.server)?.rows.get(j.pane);
      const after = h && entry ? { entry, stale: isStale(h) } : null;
      const b = j.before;
      if (b && after && b.stale === after.stale && sameEntry(b.entry, after.entry)) continue;
      if (!b && !after) continue;
      out.rows.push({ key, before: b, after });
    }
    this.rows.clear();
    return out;
  }
}
