// The store's byte side: a host's rows as pieces of the fleet document (pieces.ts), its status as
// JSON cut around the two values that move on every heartbeat, and the document assembled from
// both. Everything is cached on the host record and rebuilt only after the host changed.

import { hostStatusObject, type HostStatus } from '../../shared/fleet.js';
import { selectRow, type Selector } from '../../shared/selectors.js';
import { isStale, type HostRecord } from './host-record.js';
import { RANKS, buildPieces, piecesBytes, rowText, type HostPieces, type RowEntry } from './pieces.js';

export const DOC_HEAD = Buffer.from('{"schema":1,"agents":[', 'utf8');
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

/** The host's rows in fleet order and as bytes, rebuilt when they or the host's staleness changed. */
export function piecesOf(h: HostRecord): HostPieces {
  const stale = isStale(h);
  if (h.pieces && h.pieces.stale === stale) return h.pieces;
  const all: RowEntry[] = [];
  for (const s of h.servers.values()) for (const e of s.rows.values()) all.push(e);
  h.pieces = buildPieces(all, stale);
  return h.pieces;
}

export function statusOf(h: HostRecord): HostStatus {
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

/** A host's status as JSON, its cut text cached until the host changes. */
export function statusText(h: HostRecord): string {
  h.statusText ??= statusCut(JSON.stringify(statusOf({ ...h, lastSeenMs: CUT_SEEN, lagMs: CUT_LAG })));
  const [a, b, c] = h.statusText;
  return a + JSON.stringify(h.lastSeenMs) + b + JSON.stringify(h.lagMs === null ? null : h.lagMs === 0 ? 0 : -h.lagMs) + c;
}

/** A host's status as a read sends it: led by a comma, or not (`first`, the first host). */
export function statusBytes(h: HostRecord, first = false): Buffer {
  const text = statusText(h);
  const c = h.statusBytes;
  if (c && c.text === h.statusText && c.seen === h.lastSeenMs && c.lag === h.lagMs) return first ? c.first : c.bytes;
  // A few hundred bytes: from Buffer's pool, which is far cheaper to allocate from than a
  // buffer of its own; all the hosts' statuses together pin at most a pool slab each.
  const bytes = Buffer.from(`,${text}`, 'utf8');
  h.statusBytes = { text: h.statusText!, seen: h.lastSeenMs, lag: h.lagMs, bytes, first: bytes.subarray(1) };
  return first ? h.statusBytes.first : bytes;
}

/** The hosts' row pieces in fleet order (state rank, then host), as they are. */
export function agentsParts(hosts: HostRecord[]): Buffer[] {
  const parts: Buffer[] = [];
  for (let r = 0; r < RANKS; r++) {
    for (const h of hosts) {
      const p = piecesOf(h);
      if (p.bytes[r]!.length === 0) continue;
      parts.push(piecesBytes(p, r, parts.length === 0));
    }
  }
  return parts;
}

/** The rows `filter` selects, in fleet order, as the text between the agents' brackets. */
export function agentsText(hosts: HostRecord[], filter: Selector): string {
  const parts: string[] = [];
  for (let r = 0; r < RANKS; r++) {
    for (const h of hosts) {
      const p = piecesOf(h);
      for (const e of p.byRank[r]!) if (selectRow(filter, e.row)) parts.push(rowText(e, p.stale));
    }
  }
  return parts.join(',');
}

/**
 * The document's tail: the hosts' statuses between their brackets. One part per host, reused
 * while its status and clocks stand: joining a fresh text of every host's status (300 KB at 1,000
 * hosts) and encoding it cost a read more than all the rest.
 */
export function hostsParts(hosts: HostRecord[]): Buffer[] {
  const tail: Buffer[] = [HOSTS_HEAD];
  for (const h of hosts) {
    tail.push(statusBytes(h, tail.length === 1));
  }
  tail.push(DOC_END);
  return tail;
}
