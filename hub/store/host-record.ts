// What the in-memory store holds per host: its sync state, its rows by server, and the encoded
// forms of both (dropped on change, rebuilt by encoding.ts on the next read or prepare).

import type { HostStatus, Transport } from '../../shared/fleet.js';
import { classOf, type StateClass } from '../../shared/tokens.js';
import type { HostMetrics } from './fleet-store.js';
import type { HostPieces, RowEntry } from './pieces.js';

export interface ServerSlot {
  incarnation: string;
  rows: Map<string, RowEntry>;
}

export interface HostRecord {
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
  /** Requests besides `act` the collector said it answers (its hello's `remote_verbs`); [] from older ones. */
  remoteVerbs: string[];
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

/** A host nothing has been heard from yet. */
export function newHostRecord(host: string, transport: Transport): HostRecord {
  return {
    host,
    transport,
    reachable: false,
    synced: false,
    lastSeenMs: null,
    reason: null,
    collectorVersion: null,
    epoch: null,
    seq: null,
    servers: new Map(),
    pending: null,
    owner: null,
    actionsAllowed: [],
    lagMs: null,
    sentSeq: null,
    lost: false,
    helloCount: 0,
    lastRefusal: null,
    actionsByAgent: null,
    sharesPrompt: null,
    remoteVerbs: [],
    pieces: null,
    statusText: null,
    statusBytes: null,
  };
}

export function isStale(h: HostRecord): boolean {
  return !h.reachable || !h.synced;
}

/** The gauges /metrics shows for a host, read when scraped. */
export function hostMetricsOf(h: HostRecord): HostMetrics {
  let rows = 0;
  const classes: Record<StateClass, number> = { blocked: 0, working: 0, done: 0, idle: 0, unknown: 0 };
  let oldestBlockedMs: number | null = null;
  // One pass over the held objects, nothing encoded: cheap enough to run on every scrape.
  for (const s of h.servers.values()) {
    rows += s.rows.size;
    for (const { row } of s.rows.values()) {
      classes[classOf(row.state, row.attention)]++;
      if (row.state === 'blocked' && (oldestBlockedMs === null || row.since_ms < oldestBlockedMs)) oldestBlockedMs = row.since_ms;
    }
  }
  return {
    host: h.host,
    reachable: h.reachable,
    stale: isStale(h),
    lost: h.lost,
    rows,
    lagMs: h.lagMs,
    lastSeenMs: h.lastSeenMs,
    seqBehind: h.sentSeq !== null && h.seq !== null ? Math.max(0, h.sentSeq - h.seq) : null,
    classes,
    oldestBlockedMs,
  };
}
