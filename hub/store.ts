// The fleet store: the hub's cache of what every collector last said, keyed by (host, server,
// pane). It holds no sockets and reads the hub clock only through the function it is given, so
// every rule here is testable frame by frame.
//
// Rows are levels: a frame replaces what it names. A host's rows change only through a complete
// snapshot, a delta whose sequence follows the last one applied, or a server frame. Losing a link
// never removes or idles rows: it marks them stale.

import { fleetRowObject, hostStatusObject, type FleetDocument, type FleetRow, type HostStatus, type Transport } from '../shared/fleet.js';
import type { ProtocolRow } from '../shared/row.js';
import { rowKey } from '../shared/edges.js';
import { EMPTY_SELECTOR, isEmptySelector, selectRow, type Selector } from '../shared/selectors.js';
import type { ServerState } from '../shared/protocol.js';
import { RANKS, buildPieces, insertSorted, piecesBytes, removeSorted, rowEntry, rowText, sameEntry, type HostPieces, type RowEntry } from './store-pieces.js';

interface SnapshotFrameIn {
  epoch: string;
  seq: number;
  servers: ServerState[];
  complete: boolean;
}

interface DeltaFrameIn {
  epoch: string;
  seq: number;
  server: string;
  incarnation: string;
  upserts: ProtocolRow[];
  removals: string[];
}

interface ServerFrameIn {
  epoch: string;
  seq: number;
  event: 'appeared' | 'incarnation' | 'gone';
  server: string;
  incarnation: string;
}

interface ServerSlot {
  incarnation: string;
  rows: Map<string, RowEntry>;
}

interface HostRecord {
  host: string;
  transport: Transport;
  reachable: boolean;
  /** The rows follow the collector's sequence; false until a snapshot completes or a resume. */
  synced: boolean;
  lastSeenMs: number | null;
  reason: string | null;
  collectorVersion: string | null;
  epoch: string | null;
  /** Last sequence applied in `epoch`; null means the next thing must be a complete snapshot. */
  seq: number | null;
  servers: Map<string, ServerSlot>;
  pending: { seq: number; servers: Map<string, ServerSlot> } | null;
  /** The session that may write; a replaced session's late frames and close are ignored. */
  owner: object | null;
  actionsAllowed: string[];
  actionsByAgent: HostStatus['actions_by_agent'];
  sharesPrompt: boolean | null;
  /** Hub clock minus the collector's heartbeat clock: transit plus skew. */
  lagMs: number | null;
  /** The collector's own last sent sequence, from its heartbeat. */
  sentSeq: number | null;
  lost: boolean;
  helloCount: number;
  lastRefusal: { reason: string; at_ms: number } | null;
  /** This host's rows in fleet order and as text; null after any change to them. */
  pieces: HostPieces | null;
  /** This host's status as JSON, cut where `last_seen_ms` and `clock_offset_ms` go; null after any change to it. */
  statusText: [string, string, string] | null;
  /** The status as a read sends it (led by a comma), with what it was made from. */
  statusBytes: { text: [string, string, string]; seen: number | null; lag: number | null; bytes: Buffer; first: Buffer } | null;
}

/** A row as a reader last saw it: what it held and whether its host was stale. */
export interface RowSeen {
  entry: RowEntry;
  stale: boolean;
}

/** One row that changed since the last `takeChanges`: before and now (null when absent). */
export interface RowChange {
  key: string;
  before: RowSeen | null;
  after: RowSeen | null;
}

export interface StoreChanges {
  rows: RowChange[];
  /** Hosts whose status changed (last_seen_ms alone does not count). */
  hosts: string[];
}

export type RefusalCode = 'unknown-host' | 'not-owner' | 'epoch' | 'no-baseline' | 'gap' | 'unknown-incarnation';

export type ApplyOutcome =
  | { ok: true; applied: boolean }
  | { ok: false; code: RefusalCode; message: string };

export interface StoreChange {
  at_ms: number;
  version: number;
}

export interface HostMetrics {
  host: string;
  reachable: boolean;
  stale: boolean;
  lost: boolean;
  rows: number;
  lagMs: number | null;
  lastSeenMs: number | null;
  seqBehind: number | null;
}

export interface HelloInfo {
  transport: Transport;
  epoch: string;
  collectorVersion: string;
  actionsAllowed: string[];
  /** From the hello, when the collector sent them. */
  actionsByAgent?: HostStatus['actions_by_agent'];
  sharesPrompt?: boolean | null;
  at?: number;
}

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

export class FleetStore {
  private readonly hosts = new Map<string, HostRecord>();
  private readonly listeners = new Set<(c: StoreChange) => void>();
  private readonly clock: () => number;
  private readonly lostAfterMs: number;
  private versionNo = 0;
  private cache: { version: number; rows: FleetRow[] } | null = null;
  private agentsCache: { version: number; parts: Buffer[] } | null = null;
  /** Host names, sorted; kept in order as hosts come and go. */
  private readonly hostOrder: string[] = [];
  /** Rows changed since the last `takeChanges`, with what they were before; null while nobody reads. */
  private journal: Map<string, { host: string; server: string; pane: string; before: RowSeen | null }> | null = null;
  private journalHosts = new Set<string>();
  /** When a full read was last answered (store clock), for the warmer. */
  private lastDocumentRead: number | null = null;
  /** Hosts whose pieces or status text a change dropped, for `prepare`. */
  private readonly unbuilt = new Set<HostRecord>();

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
    if (on && !this.journal) this.journal = new Map();
    if (!on) this.journal = null;
    this.journalHosts.clear();
  }

  /** What changed since the previous call: only rows whose text or staleness really moved. */
  takeChanges(): StoreChanges {
    const out: StoreChanges = { rows: [], hosts: [...this.journalHosts] };
    this.journalHosts.clear();
    if (!this.journal) return out;
    for (const [key, j] of this.journal) {
      const h = this.hosts.get(j.host);
      const entry = h?.servers.get(j.server)?.rows.get(j.pane);
      const after = h && entry ? { entry, stale: isStale(h) } : null;
      const b = j.before;
      if (b && after && b.stale === after.stale && sameEntry(b.entry, after.entry)) continue;
      if (!b && !after) continue;
      out.rows.push({ key, before: b, after });
    }
    this.journal.clear();
    return out;
  }

  /** Remember a row's current form before it changes (first change since the last take wins). */
  private noteRow(h: HostRecord, server: string, pane: string): void {
    if (!this.journal) return;
    const key = rowKey({ host: h.host, server, pane });
    if (this.journal.has(key)) return;
    const entry = h.servers.get(server)?.rows.get(pane);
    this.journal.set(key, { host: h.host, server, pane, before: entry ? { entry, stale: isStale(h) } : null });
  }

  /** Before anything that may change all of a host's rows or their staleness. */
  private noteHostRows(h: HostRecord): void {
    if (!this.journal) return;
    for (const [server, slot] of h.servers) for (const pane of slot.rows.keys()) this.noteRow(h, server, pane);
  }

  private hostChanged(h: HostRecord, rows: boolean): void {
    h.statusText = null;
    if (rows) h.pieces = null;
    this.unbuilt.add(h);
    if (this.journal) this.journalHosts.add(h.host);
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
      this.piecesOf(h);
      this.statusBytes(h);
      built++;
    }
    this.unbuilt.clear();
    return built;
  }

  private changed(): void {
    this.versionNo++;
    this.cache = null;
    const c = { at_ms: this.clock(), version: this.versionNo };
    for (const cb of [...this.listeners]) cb(c);
  }

  private record(host: string, transport: Transport): HostRecord {
    let h = this.hosts.get(host);
    if (!h) {
      h = {
        host, transport, reachable: false, synced: false, lastSeenMs: null, reason: null, collectorVersion: null,
        epoch: null, seq: null, servers: new Map(), pending: null, owner: null, actionsAllowed: [], lagMs: null,
        sentSeq: null, lost: false, helloCount: 0, lastRefusal: null, actionsByAgent: null, sharesPrompt: null, pieces: null, statusText: null, statusBytes: null,
      };
      this.hosts.set(host, h);
      insertSorted(this.hostOrder, host);
      if (this.journal) this.journalHosts.add(host);
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
    this.noteHostRows(h);
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
    this.noteHostRows(h);
    if (this.journal) for (const [server, slot] of h.pending.servers) for (const pane of slot.rows.keys()) this.noteRow(h, server, pane);
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
      this.noteRow(h, f.server, r.pane);
      slot.rows.set(r.pane, e);
      moved = true;
    }
    for (const p of f.removals) {
      if (!slot.rows.has(p)) continue;
      this.noteRow(h, f.server, p);
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
      for (const pane of slot.rows.keys()) this.noteRow(h, f.server, pane);
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
    this.noteHostRows(h);
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
    this.noteHostRows(h);
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
    this.noteHostRows(h);
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
    this.noteHostRows(h);
    this.hosts.delete(host);
    this.unbuilt.delete(h);
    removeSorted(this.hostOrder, host);
    if (this.journal) this.journalHosts.add(host);
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

  private piecesOf(h: HostRecord): HostPieces {
    const stale = isStale(h);
    if (h.pieces && h.pieces.stale === stale) return h.pieces;
    const all: RowEntry[] = [];
    for (const s of h.servers.values()) for (const e of s.rows.values()) all.push(e);
    h.pieces = buildPieces(all, stale);
    return h.pieces;
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
      for (const h of hosts) for (const e of this.piecesOf(h).byRank[r]!) out.push(fleetRowObject(e.row, h.pieces!.stale));
    }
    this.cache = { version: this.versionNo, rows: out };
    return out;
  }

  private statusOf(h: HostRecord): HostStatus {
    return hostStatusObject({
      host: h.host,
      transport: h.transport,
      reachable: h.reachable,
      stale: isStale(h),
      last_seen_ms: h.lastSeenMs,
      reason: h.lost ? 'lost' : h.reason,
      collector_version: h.collectorVersion,
      servers: [...h.servers.entries()]
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([server, s]) => ({ server, incarnation: s.incarnation, rows: s.rows.size })),
      actions_allowed: h.actionsAllowed.slice(),
      schema: 1,
      last_refusal: h.lastRefusal ?? null,
      clock_offset_ms: h.lagMs === null ? null : h.lagMs === 0 ? 0 : -h.lagMs,
      actions_by_agent: h.actionsByAgent,
      shares_prompt: h.sharesPrompt,
    });
  }

  hostStatuses(): HostStatus[] {
    return this.orderedHosts(null).map((h) => this.statusOf(h));
  }

  /** A host's status as JSON, cached until the host changes; null for a host the store no longer holds. */
  hostStatusText(host: string): string | null {
    const h = this.hosts.get(host);
    if (!h) return null;
    h.statusText ??= statusCut(JSON.stringify(this.statusOf({ ...h, lastSeenMs: CUT_SEEN, lagMs: CUT_LAG })));
    const [a, b, c] = h.statusText;
    return a + JSON.stringify(h.lastSeenMs) + b + JSON.stringify(h.lagMs === null ? null : h.lagMs === 0 ? 0 : -h.lagMs) + c;
  }

  /** A host's status as a read sends it: led by a comma, or not (`first`, the first host). */
  private statusBytes(h: HostRecord, first = false): Buffer {
    const text = this.hostStatusText(h.host)!;
    const c = h.statusBytes;
    if (c && c.text === h.statusText && c.seen === h.lastSeenMs && c.lag === h.lagMs) return first ? c.first : c.bytes;
    // A few hundred bytes: from Buffer's pool, which is far cheaper to allocate from than a
    // buffer of its own; all the hosts' statuses together pin at most a pool slab each.
    const bytes = Buffer.from(`,${text}`, 'utf8');
    h.statusBytes = { text: h.statusText!, seen: h.lastSeenMs, lag: h.lagMs, bytes, first: bytes.subarray(1) };
    return first ? h.statusBytes.first : bytes;
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
        this.agentsCache = { version: this.versionNo, parts: this.agentsParts(hosts) };
      }
      agents = this.agentsCache.parts;
    } else if (isEmptySelector({ ...selector, host: null })) {
      // Only a host filter: that host's pieces are already the answer.
      agents = this.agentsParts(hosts);
    } else {
      agents = [Buffer.from(this.agentsText(hosts, selector), 'utf8')];
    }
    // One part per host, reused while its status and clocks stand: joining a fresh text of every
    // host's status (300 KB at 1,000 hosts) and encoding it cost a read more than all the rest.
    const tail: Buffer[] = [HOSTS_HEAD];
    for (const h of hosts) {
      tail.push(this.statusBytes(h, tail.length === 1));
    }
    tail.push(DOC_END);
    return [DOC_HEAD, ...agents, ...tail];
  }

  private agentsParts(hosts: HostRecord[]): Buffer[] {
    const parts: Buffer[] = [];
    for (let r = 0; r < RANKS; r++) {
      for (const h of hosts) {
        const p = this.piecesOf(h);
        if (p.bytes[r]!.length === 0) continue;
        parts.push(piecesBytes(p, r, parts.length === 0));
      }
    }
    return parts;
  }

  private agentsText(hosts: HostRecord[], filter: Selector): string {
    const parts: string[] = [];
    for (let r = 0; r < RANKS; r++) {
      for (const h of hosts) {
        const p = this.piecesOf(h);
        for (const e of p.byRank[r]!) if (selectRow(filter, e.row)) parts.push(rowText(e, p.stale));
      }
    }
    return parts.join(',');
  }

  /** The JSON of one row as it stands now (a changes line carries it), or null. */
  rowText(seen: RowSeen): string {
    return rowText(seen.entry, seen.stale);
  }

  hostMetrics(): HostMetrics[] {
    return [...this.hosts.values()].map((h) => {
      let rows = 0;
      for (const s of h.servers.values()) rows += s.rows.size;
      return {
        host: h.host,
        reachable: h.reachable,
        stale: isStale(h),
        lost: h.lost,
        rows,
        lagMs: h.lagMs,
        lastSeenMs: h.lastSeenMs,
        seqBehind: h.sentSeq !== null && h.seq !== null ? Math.max(0, h.sentSeq - h.seq) : null,
      };
    });
  }
}

const DOC_HEAD = Buffer.from('{"schema":1,"agents":[', 'utf8');
const HOSTS_HEAD = Buffer.from('],"hosts":[', 'utf8');
const DOC_END = Buffer.from(']}', 'utf8');

// Stand-in values that cannot occur, encoded into a host's status and cut out again.
const CUT_SEEN = -0.5;
const CUT_LAG = 0.25;

function statusCut(text: string): [string, string, string] {
  const seen = text.indexOf(`"last_seen_ms":${CUT_SEEN}`);
  const lag = text.indexOf(`"clock_offset_ms":${-CUT_LAG}`);
  if (seen < 0 || lag < seen) throw new Error('host status key order is not the expected one');
  const seenEnd = seen + `"last_seen_ms":${CUT_SEEN}`.length;
  const lagEnd = lag + `"clock_offset_ms":${-CUT_LAG}`.length;
  return [text.slice(0, seenEnd - String(CUT_SEEN).length), text.slice(seenEnd, lagEnd - String(-CUT_LAG).length), text.slice(lagEnd)];
}

function isStale(h: HostRecord): boolean {
  return !h.reachable || !h.synced;
}
