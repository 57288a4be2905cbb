// The fleet store: the hub's cache of what every collector last said, keyed by (host, server,
// pane). It holds no sockets and reads the hub clock only through the function it is given, so
// every rule here is testable frame by frame.
//
// Rows are levels: a frame replaces what it names. A host's rows change only through a complete
// snapshot, a delta whose sequence follows the last one applied, or a server frame. Losing a link
// never removes or idles rows: it marks them stale.

import { fleetRowObject, hostStatusObject, type FleetDocument, type FleetRow, type HostStatus, type Transport } from '../shared/fleet.js';
import type { ProtocolRow } from '../shared/row.js';
import { EMPTY_SELECTOR, compareFleetRows, selectRow, type Selector } from '../shared/selectors.js';
import type { ServerState } from '../shared/protocol.js';

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
  rows: Map<string, ProtocolRow>;
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
  /** Hub clock minus the collector's heartbeat clock: transit plus skew. */
  lagMs: number | null;
  /** The collector's own last sent sequence, from its heartbeat. */
  sentSeq: number | null;
  lost: boolean;
  helloCount: number;
  lastRefusal: { reason: string; at_ms: number } | null;
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
  at?: number;
}

export interface FleetStoreOptions {
  clock?: () => number;
  /** A host unreachable and silent this long is shown as lost. */
  lostAfterMs?: number;
}

function slotFrom(state: ServerState, host: string): ServerSlot {
  const rows = new Map<string, ProtocolRow>();
  for (const r of state.rows) rows.set(r.pane, bindRow(r, host, state.server));
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
        epoch: null, seq: null, servers: new Map(), pending: null, owner: null, actionsAllowed: [], actionsByAgent: null, lagMs: null,
        sentSeq: null, lost: false, helloCount: 0, lastRefusal: null,
      };
      this.hosts.set(host, h);
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
    h.servers = h.pending.servers;
    h.seq = h.pending.seq;
    h.pending = null;
    h.synced = true;
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
    for (const r of f.upserts) slot.rows.set(r.pane, bindRow(r, host, f.server));
    for (const p of f.removals) slot.rows.delete(p);
    h.seq = f.seq;
    this.changed();
    return { ok: true, applied: true };
  }

  applyServer(host: string, owner: object, f: ServerFrameIn): ApplyOutcome {
    const h = this.writable(host, owner, f.epoch);
    if (!('host' in h)) return h;
    const seqOutcome = this.sequence(h, f.seq);
    if (seqOutcome) return seqOutcome;
    const slot = h.servers.get(f.server);
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
    h.seq = null;
    h.pending = null;
    const wasSynced = h.synced;
    h.synced = false;
    if (wasSynced) this.changed();
  }

  /** The session of `owner` ended or went silent. Rows are kept and marked stale. */
  linkDown(host: string, owner: object, reason: string): void {
    const h = this.hosts.get(host);
    if (!h || h.owner !== owner) return;
    h.owner = null;
    h.reachable = false;
    h.reason = reason;
    h.pending = null;
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
    h.reachable = false;
    h.reason = reason;
    this.changed();
  }

  /** A link for a known host was refused; shown on its status until a link is accepted. */
  noteRefusal(host: string, reason: string): void {
    const h = this.hosts.get(host);
    if (!h || h.lastRefusal?.reason === reason) return;
    h.lastRefusal = { reason, at_ms: this.clock() };
    this.changed();
  }

  /** Remove a host and its rows. Refused while a link is up: it would only come back. */
  forget(host: string): boolean {
    const h = this.hosts.get(host);
    if (!h || h.reachable) return false;
    this.hosts.delete(host);
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
        flipped = true;
      }
    }
    if (flipped) this.changed();
  }

  actionsAllowed(host: string): readonly string[] {
    return this.hosts.get(host)?.actionsAllowed ?? [];
  }

  /** Every row in fleet order. Rebuilt once per change, shared by every reader. */
  rows(): readonly FleetRow[] {
    if (this.cache && this.cache.version === this.versionNo) return this.cache.rows;
    const out: FleetRow[] = [];
    for (const h of this.hosts.values()) {
      const stale = isStale(h);
      for (const s of h.servers.values()) for (const r of s.rows.values()) out.push(fleetRowObject(r, stale));
    }
    out.sort(compareFleetRows);
    this.cache = { version: this.versionNo, rows: out };
    return out;
  }

  hostStatuses(): HostStatus[] {
    return [...this.hosts.values()]
      .sort((a, b) => (a.host < b.host ? -1 : a.host > b.host ? 1 : 0))
      .map((h) =>
        hostStatusObject({
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
        }),
      );
  }

  document(selector: Selector = EMPTY_SELECTOR): FleetDocument {
    const agents = this.rows().filter((r) => selectRow(selector, r));
    let hosts = this.hostStatuses();
    if (selector.host !== null) hosts = hosts.filter((h) => h.host === selector.host);
    return { schema: 1, agents, hosts };
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

function isStale(h: HostRecord): boolean {
  return !h.reachable || !h.synced;
}
