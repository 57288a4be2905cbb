// The in-memory fleet store (the `FleetStore` of fleet-store.ts): the hub's cache of what every
// collector last said, keyed by (host, server, pane). It holds no sockets and reads the hub clock
// only through the function it is given, so every rule here is testable frame by frame. This file
// is the sync state machine; the change journal is journal.ts, the bytes a read sends encoding.ts.
//
// Rows are levels: a frame replaces what it names. A host's rows change only through a complete
// snapshot, a delta whose sequence follows the last one applied, or a server frame. Losing a link
// never removes or idles rows: it marks them stale.

import { fleetRowObject, type FleetDocument, type FleetRow, type HostStatus, type Transport } from '../../shared/fleet.js';
import type { ProtocolRow } from '../../shared/row.js';
import { EMPTY_SELECTOR, isEmptySelector, selectRow, type Selector } from '../../shared/selectors.js';
import type { ServerState } from '../../shared/protocol.js';
import { DOC_HEAD, agentsParts, agentsText, hostsParts, piecesOf, statusBytes, statusOf, statusText } from './encoding.js';
import type {
  ApplyOutcome,
  DeltaFrameIn,
  FleetStore,
  HelloInfo,
  HostMetrics,
  RowSeen,
  ServerFrameIn,
  SnapshotFrameIn,
  StoreChange,
  StoreChanges,
} from './fleet-store.js';
import { hostMetricsOf, newHostRecord, type HostRecord, type ServerSlot } from './host-record.js';
import { ChangeJournal } from './journal.js';
import { RANKS, insertSorted, removeSorted, rowEntry, rowText, sameEntry, type RowEntry } from './pieces.js';

export interface FleetStoreOptions {
  clock?: () => number;
  /** A host unreachable and silent this long is shown as lost. */
  lostAfterMs?: number;
}

function slotFrom(state: ServerState, host: string): ServerSlot {
  const rows = new Map<string, RowEntry>();
  for (const r of state.rows) rows.set(r.pane, rowEntry(bindRow(r, host, state.server)));
  return { incarnation: state.incarnation, rows };
}

/** The row's `host` and `server` are the hub's binding, not whatever the collector wrote. */
function bindRow(row: ProtocolRow, host: string, server: string): ProtocolRow {
  return row.host === host && row.server === server ? row : { ...row, host, server };
}

export class MemoryFleetStore implements FleetStore {
  protected readonly hosts = new Map<string, HostRecord>();
  private readonly listeners = new Set<(c: StoreChange) => void>();
  protected readonly clock: () => number;
  private readonly lostAfterMs: number;
  private versionNo = 0;
  private cache: { version: number; rows: FleetRow[] } | null = null;
  private agentsCache: { version: number; parts: Buffer[] } | null = null;
  /** Host names, sorted; kept in order as hosts come and go. */
  protected readonly hostOrder: string[] = [];
  protected readonly journal = new ChangeJournal();
  /** When a full read was last answered (store clock), for the warmer. */
  private lastDocumentRead: number | null = null;
  /** Hosts whose pieces or status text a change dropped, for `prepare`. */
  protected readonly unbuilt = new Set<HostRecord>();

  constructor(opts: FleetStoreOptions = {}) {
    this.clock = opts.clock ?? Date.now;
    this.lostAfterMs = opts.lostAfterMs ?? Number.POSITIVE_INFINITY;
  }

  get version(): number {
    return this.versionNo;
  }

  onChange(cb: (c: StoreChange) => void): () => void {
    this.listeners.add(cb);
    return () => this.listeners.delete(cb);
  }

  /**
   * Start (or stop) recording which rows change, for the streams. Off while nobody subscribes, so
   * an unwatched hub keeps no journal.
   */
  setJournaling(on: boolean): void {
    this.journal.set(on);
  }

  /** What changed since the previous call: only rows whose text or staleness really moved. */
  takeChanges(): StoreChanges {
    return this.journal.take((host) => this.hosts.get(host));
  }

  protected hostChanged(h: HostRecord, rows: boolean): void {
    h.statusText = null;
    if (rows) h.pieces = null;
    this.unbuilt.add(h);
    this.journal.noteHost(h.host);
  }

  /** A `GET /v1/agents` is being answered: the warmer keeps pieces encoded for the next one. */
  noteFullRead(): void {
    this.lastDocumentRead = this.clock();
  }

  /** Whether `noteFullRead` was called in the last `ms`. */
  readWithin(ms: number): boolean {
    return this.lastDocumentRead !== null && this.clock() - this.lastDocumentRead <= ms;
  }

  /**
   * Encode now what changed since the last call: the row pieces and status text of every host
   * that changed. A full read then only strings the pieces together: left to the read, at 1,000
   * updates/s this was most of the hosts and 10–40 ms of work before the first byte went out.
   * Reads stay correct without it (they build what is missing); this only moves the work.
   */
  prepare(): number {
    let built = 0;
    for (const h of this.unbuilt) {
      piecesOf(h);
      statusBytes(h);
      built++;
    }
    this.unbuilt.clear();
    return built;
  }

  protected changed(): void {
    this.versionNo++;
    this.cache = null;
    const c = { at_ms: this.clock(), version: this.versionNo };
    for (const cb of [...this.listeners]) cb(c);
  }

  protected record(host: string, transport: Transport): HostRecord {
    let h = this.hosts.get(host);
    if (!h) {
      h = newHostRecord(host, transport);
      this.hosts.set(host, h);
      insertSorted(this.hostOrder, host);
      this.journal.noteHost(host);
    }
    return h;
  }

  /** Make a configured host visible before it ever connects, so its absence shows. */
  declare(host: string, transport: Transport): void {
    if (this.hosts.has(host)) return;
    this.record(host, transport);
    this.changed();
  }

  /**
   * A session said hello for `host`. It becomes the host's only writer. Returns the sequence to
   * resume after (same epoch and a baseline held) or null (a fresh snapshot is needed).
   */
  hello(host: string, info: HelloInfo, owner: object): { resumeFrom: number | null; reconnect: boolean } {
    const h = this.record(host, info.transport);
    this.journal.noteHostRows(h);
    const reconnect = h.helloCount > 0;
    h.helloCount++;
    h.owner = owner;
    h.transport = info.transport;
    h.reachable = true;
    h.lost = false;
    h.reason = null;
    h.lastRefusal = null;
    h.collectorVersion = info.collectorVersion;
    h.actionsAllowed = info.actionsAllowed.slice();
    h.actionsByAgent = info.actionsByAgent ?? null;
    h.sharesPrompt = info.sharesPrompt ?? null;
    h.remoteVerbs = info.remoteVerbs?.slice() ?? [];
    h.lastSeenMs = this.clock();
    h.pending = null;
    h.lagMs = info.at === undefined ? null : this.clock() - info.at;
    h.sentSeq = null;
    let resumeFrom: number | null = null;
    if (h.epoch === info.epoch && h.seq !== null) {
      resumeFrom = h.seq;
      h.synced = true;
    } else {
      // A new collector lifetime: its old sequence means nothing. Old rows stay, stale, until the
      // new snapshot completes.
      h.epoch = info.epoch;
      h.seq = null;
      h.synced = false;
    }
    this.hostChanged(h, true);
    this.changed();
    return { resumeFrom, reconnect };
  }

  private writable(host: string, owner: object, epoch: string | null): HostRecord | ApplyOutcome {
    const h = this.hosts.get(host);
    if (!h) return { ok: false, code: 'unknown-host', message: `host ${host} has not said hello` };
    if (h.owner !== owner) return { ok: false, code: 'not-owner', message: `another link now publishes for ${host}` };
    if (epoch !== null && h.epoch !== epoch) {
      return { ok: false, code: 'epoch', message: `frame epoch does not match the hello epoch` };
    }
    return h;
  }

  applySnapshot(host: string, owner: object, f: SnapshotFrameIn): ApplyOutcome {
    const h = this.writable(host, owner, f.epoch);
    if (!('host' in h)) return h;
    if (!h.pending || h.pending.seq !== f.seq) h.pending = { seq: f.seq, servers: new Map() };
    for (const s of f.servers) {
      const slot = slotFrom(s, host);
      const prior = h.pending.servers.get(s.server);
      // A server split across parts keeps the parts' rows together.
      if (prior && prior.incarnation === slot.incarnation) for (const [k, v] of slot.rows) prior.rows.set(k, v);
      else h.pending.servers.set(s.server, slot);
    }
    if (!f.complete) return { ok: true, applied: false };
    this.journal.noteHostRows(h);
    if (this.journal.on) for (const [server, slot] of h.pending.servers) for (const pane of slot.rows.keys()) this.journal.noteRow(h, server, pane);
    // A row that arrives unchanged keeps its held entry, so its text is not rebuilt downstream.
    for (const [server, slot] of h.pending.servers) {
      const old = h.servers.get(server);
      if (!old || old.incarnation !== slot.incarnation) continue;
      for (const [pane, e] of slot.rows) {
        const was = old.rows.get(pane);
        if (was && sameEntry(was, e)) slot.rows.set(pane, was);
      }
    }
    h.servers = h.pending.servers;
    h.seq = h.pending.seq;
    h.pending = null;
    h.synced = true;
    this.hostChanged(h, true);
    this.changed();
    return { ok: true, applied: true };
  }

  /** Sequence check shared by deltas and server frames; null means apply. */
  private sequence(h: HostRecord, seq: number): ApplyOutcome | null {
    if (h.seq === null) return { ok: false, code: 'no-baseline', message: 'no complete snapshot yet for this epoch' };
    // Already applied (a replay overlapping what we hold): levels make this harmless to skip.
    if (seq <= h.seq) return { ok: true, applied: false };
    if (seq !== h.seq + 1) return { ok: false, code: 'gap', message: `sequence gap: expected ${h.seq + 1}, got ${seq}` };
    return null;
  }

  applyDelta(host: string, owner: object, f: DeltaFrameIn): ApplyOutcome {
    const h = this.writable(host, owner, f.epoch);
    if (!('host' in h)) return h;
    const seqOutcome = this.sequence(h, f.seq);
    if (seqOutcome) return seqOutcome;
    const slot = h.servers.get(f.server);
    if (!slot || slot.incarnation !== f.incarnation) {
      return { ok: false, code: 'unknown-incarnation', message: `delta for an unknown incarnation of a server` };
    }
    let moved = false;
    const count = slot.rows.size;
    for (const r of f.upserts) {
      const e = rowEntry(bindRow(r, host, f.server));
      const was = slot.rows.get(r.pane);
      if (was && sameEntry(was, e)) continue;
      this.journal.noteRow(h, f.server, r.pane);
      slot.rows.set(r.pane, e);
      moved = true;
    }
    for (const p of f.removals) {
      if (!slot.rows.has(p)) continue;
      this.journal.noteRow(h, f.server, p);
      slot.rows.delete(p);
      moved = true;
    }
    h.seq = f.seq;
    // The host's status shows only its row count: rows that changed in place leave it as it was.
    if (moved && slot.rows.size !== count) this.hostChanged(h, true);
    else if (moved) {
      h.pieces = null;
      this.unbuilt.add(h);
    }
    this.changed();
    return { ok: true, applied: true };
  }

  applyServer(host: string, owner: object, f: ServerFrameIn): ApplyOutcome {
    const h = this.writable(host, owner, f.epoch);
    if (!('host' in h)) return h;
    const seqOutcome = this.sequence(h, f.seq);
    if (seqOutcome) return seqOutcome;
    const slot = h.servers.get(f.server);
    if (slot && (f.event === 'gone' || slot.incarnation !== f.incarnation)) {
      for (const pane of slot.rows.keys()) this.journal.noteRow(h, f.server, pane);
    }
    this.hostChanged(h, true);
    if (f.event === 'gone') h.servers.delete(f.server);
    else if (!slot || slot.incarnation !== f.incarnation) {
      // Pane ids restart with a new server lifetime: the old rows cannot be matched to anything.
      h.servers.set(f.server, { incarnation: f.incarnation, rows: new Map() });
    }
    h.seq = f.seq;
    this.changed();
    return { ok: true, applied: true };
  }

  /** Some parts of a split snapshot arrived and its complete part has not. */
  snapshotPending(host: string, owner: object): boolean {
    const h = this.hosts.get(host);
    return h !== undefined && h.owner === owner && h.pending !== null;
  }

  /** A frame arrived from the host's current session. */
  touch(host: string, owner: object): void {
    const h = this.hosts.get(host);
    // Only the clock value moves: the status text is cut around it, so nothing is re-encoded.
    if (h && h.owner === owner) h.lastSeenMs = this.clock();
  }

  noteHeartbeat(host: string, owner: object, at: number, sentSeq: number | undefined): void {
    const h = this.hosts.get(host);
    if (!h || h.owner !== owner) return;
    h.lagMs = this.clock() - at;
    if (sentSeq !== undefined) h.sentSeq = sentSeq;
  }

  /**
   * Drop the host's baseline so only a complete snapshot is accepted next; its rows stay, stale,
   * until then. Used when a change may have been missed.
   */
  requireSnapshot(host: string, owner: object): void {
    const h = this.hosts.get(host);
    if (!h || h.owner !== owner) return;
    this.journal.noteHostRows(h);
    h.seq = null;
    h.pending = null;
    const wasSynced = h.synced;
    h.synced = false;
    if (!wasSynced) return;
    this.hostChanged(h, true);
    this.changed();
  }

  /** The session of `owner` ended or went silent. Rows are kept and marked stale. */
  linkDown(host: string, owner: object, reason: string): void {
    const h = this.hosts.get(host);
    if (!h || h.owner !== owner) return;
    this.journal.noteHostRows(h);
    h.owner = null;
    h.reachable = false;
    h.reason = reason;
    h.pending = null;
    this.hostChanged(h, true);
    this.changed();
  }

  /**
   * A link the hub dials (ssh) could not be set up or has ended: say why on the host. Ignored while
   * a session publishes for it, so a failed redial never hides a live link.
   */
  unreachable(host: string, reason: string): void {
    const h = this.hosts.get(host);
    if (!h || h.owner !== null) return;
    if (!h.reachable && h.reason === reason) return;
    this.journal.noteHostRows(h);
    h.reachable = false;
    h.reason = reason;
    this.hostChanged(h, true);
    this.changed();
  }

  /** A link for a known host was refused; shown on its status until a link is accepted. */
  noteRefusal(host: string, reason: string): void {
    const h = this.hosts.get(host);
    if (!h || h.lastRefusal?.reason === reason) return;
    h.lastRefusal = { reason, at_ms: this.clock() };
    this.hostChanged(h, false);
    this.changed();
  }

  /** Remove a host and its rows. Refused while a link is up: it would only come back. */
  forget(host: string): boolean {
    const h = this.hosts.get(host);
    if (!h || h.reachable) return false;
    this.journal.noteHostRows(h);
    this.hosts.delete(host);
    this.unbuilt.delete(h);
    removeSorted(this.hostOrder, host);
    this.journal.noteHost(host);
    this.changed();
    return true;
  }

  /** Re-evaluate which unreachable hosts are lost; emits a change when any flipped. */
  sweep(): void {
    const now = this.clock();
    let flipped = false;
    for (const h of this.hosts.values()) {
      const lost = !h.reachable && h.lastSeenMs !== null && now - h.lastSeenMs >= this.lostAfterMs;
      if (lost !== h.lost) {
        h.lost = lost;
        this.hostChanged(h, false);
        flipped = true;
      }
    }
    if (flipped) this.changed();
  }

  actionsAllowed(host: string): readonly string[] {
    return this.hosts.get(host)?.actionsAllowed ?? [];
  }

  remoteVerbs(host: string): readonly string[] {
    return this.hosts.get(host)?.remoteVerbs ?? [];
  }

  /** Hosts in name order, optionally just one. */
  private orderedHosts(only: string | null): HostRecord[] {
    if (only !== null) {
      const h = this.hosts.get(only);
      return h ? [h] : [];
    }
    return this.hostOrder.map((n) => this.hosts.get(n)!);
  }

  /** Every row in fleet order. Rebuilt once per change from the per-host pieces, shared by every reader. */
  rows(): readonly FleetRow[] {
    if (this.cache && this.cache.version === this.versionNo) return this.cache.rows;
    const out: FleetRow[] = [];
    const hosts = this.orderedHosts(null);
    for (let r = 0; r < RANKS; r++) {
      for (const h of hosts) for (const e of piecesOf(h).byRank[r]!) out.push(fleetRowObject(e.row, h.pieces!.stale));
    }
    this.cache = { version: this.versionNo, rows: out };
    return out;
  }

  hostStatuses(): HostStatus[] {
    return this.orderedHosts(null).map((h) => statusOf(h));
  }

  /** A host's status as JSON, cached until the host changes; null for a host the store no longer holds. */
  hostStatusText(host: string): string | null {
    const h = this.hosts.get(host);
    return h ? statusText(h) : null;
  }

  document(selector: Selector = EMPTY_SELECTOR): FleetDocument {
    const agents = this.rows().filter((r) => selectRow(selector, r));
    let hosts = this.hostStatuses();
    if (selector.host !== null) hosts = hosts.filter((h) => h.host === selector.host);
    return { schema: 1, agents, hosts };
  }

  /**
   * The same document as `document(selector)`, as JSON text, assembled from the rows' and hosts'
   * stored text: nothing is re-encoded or re-sorted unless its host changed.
   */
  documentText(selector: Selector = EMPTY_SELECTOR): string {
    return this.documentBytes(selector).toString('utf8');
  }

  /** `documentText` as UTF-8 bytes: what a full read sends, without a string of the whole fleet. */
  documentBytes(selector: Selector = EMPTY_SELECTOR): Buffer {
    return Buffer.concat(this.documentParts(selector));
  }

  /**
   * `documentBytes` in parts, to be sent in order as one text: the hosts' cached row pieces as they
   * are, between a head and the host statuses. Nothing the size of the fleet is allocated or
   * copied (a fresh buffer of many megabytes costs page faults and a full GC on every read), and
   * every reader of one version shares the same pieces.
   */
  documentParts(selector: Selector = EMPTY_SELECTOR): Buffer[] {
    const hosts = this.orderedHosts(selector.host);
    let agents: readonly Buffer[];
    if (isEmptySelector(selector)) {
      if (!this.agentsCache || this.agentsCache.version !== this.versionNo) {
        this.agentsCache = { version: this.versionNo, parts: agentsParts(hosts) };
      }
      agents = this.agentsCache.parts;
    } else if (isEmptySelector({ ...selector, host: null })) {
      // Only a host filter: that host's pieces are already the answer.
      agents = agentsParts(hosts);
    } else {
      agents = [Buffer.from(agentsText(hosts, selector), 'utf8')];
    }
    return [DOC_HEAD, ...agents, ...hostsParts(hosts)];
  }

  /** The JSON of one row as it stands now (a changes line carries it), or null. */
  rowText(seen: RowSeen): string {
    return rowText(seen.entry, seen.stale);
  }

  hostMetrics(): HostMetrics[] {
    return [...this.hosts.values()].map(hostMetricsOf);
  }
}
