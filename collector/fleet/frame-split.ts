// Row diffs and size-bounded framing for the publisher. Pure: no timers, no links.

import { MAX_FRAME_BYTES, type ServerState } from '../../shared/protocol.js';
import type { ProtocolRow } from '../../shared/row.js';

/** Per pane, the row and its JSON text (the text is what "changed" is judged on). */
export type RowView = Map<string, { row: ProtocolRow; json: string }>;

/**
 * What a reader sees of a row: everything but `stamped_at_ms`, which moves every time a stamp is
 * renewed. A renewal alone is not news; the host's heartbeats already say its rows are current,
 * and the row carries the newer stamp time whenever something else makes it go out.
 */
function visibleText(row: ProtocolRow): string {
  return JSON.stringify(row.stamped_at_ms === null ? row : { ...row, stamped_at_ms: null });
}

export interface RowDiff {
  upserts: ProtocolRow[];
  removals: string[];
  next: RowView;
}

export function viewOf(rows: readonly ProtocolRow[]): RowView {
  return new Map(rows.map((row) => [row.pane, { row, json: visibleText(row) }]));
}

/** Rows whose JSON differs from the previous view, and panes that are no longer there. */
export function diffRows(prev: RowView, rows: readonly ProtocolRow[]): RowDiff {
  const next = viewOf(rows);
  const upserts: ProtocolRow[] = [];
  for (const [pane, cur] of next) if (prev.get(pane)?.json !== cur.json) upserts.push(cur.row);
  const removals = [...prev.keys()].filter((pane) => !next.has(pane));
  return { upserts, removals, next };
}

const bytes = (s: string): number => Buffer.byteLength(s, 'utf8');

/** Room left for items once the envelope (the frame with empty arrays) is paid for. */
function room(envelope: unknown, limit: number): number {
  return limit - bytes(JSON.stringify(envelope));
}

/**
 * Greedy split of `items` into runs whose serialised size (plus one comma each) fits `budget`.
 * An item too large on its own still gets a run of its own: the receiver rejects it, loudly,
 * rather than us dropping it silently.
 */
export function packBySize<T>(items: readonly T[], sizeOf: (t: T) => number, budget: number): T[][] {
  const out: T[][] = [];
  let run: T[] = [];
  let used = 0;
  for (const it of items) {
    const n = sizeOf(it) + 1;
    if (run.length && used + n > budget) {
      out.push(run);
      run = [];
      used = 0;
    }
    run.push(it);
    used += n;
  }
  if (run.length) out.push(run);
  return out;
}

export interface DeltaBody {
  server: string;
  incarnation: string;
  upserts: ProtocolRow[];
  removals: string[];
}

/** One change of one server as delta bodies that each fit a frame; none when nothing changed. */
export function splitDelta(body: DeltaBody, epoch: string, limit = MAX_FRAME_BYTES): DeltaBody[] {
  if (!body.upserts.length && !body.removals.length) return [];
  const envelope = { type: 'delta', epoch, seq: Number.MAX_SAFE_INTEGER, server: body.server, incarnation: body.incarnation, upserts: [], removals: [] };
  const budget = room(envelope, limit);
  type Item = { kind: 'u'; row: ProtocolRow } | { kind: 'r'; pane: string };
  const items: Item[] = [...body.removals.map((pane): Item => ({ kind: 'r', pane })), ...body.upserts.map((row): Item => ({ kind: 'u', row }))];
  return packBySize(items, (i) => bytes(JSON.stringify(i.kind === 'u' ? i.row : i.pane)), budget).map((run) => ({
    server: body.server,
    incarnation: body.incarnation,
    upserts: run.flatMap((i) => (i.kind === 'u' ? [i.row] : [])),
    removals: run.flatMap((i) => (i.kind === 'r' ? [i.pane] : [])),
  }));
}

/**
 * A snapshot's servers spread over frames that each fit. A server with more rows than one frame
 * holds appears in consecutive frames, each entry carrying a part of its rows: a receiver takes
 * the union of a server's entries across the frames of one snapshot. Every server appears at
 * least once, rows or not.
 */
export function splitSnapshot(servers: readonly ServerState[], epoch: string, limit = MAX_FRAME_BYTES): ServerState[][] {
  const envelope = { type: 'snapshot', epoch, seq: Number.MAX_SAFE_INTEGER, servers: [], complete: false };
  // Exact accounting: the envelope, then each entry and row with the comma that separates it.
  const budget = room(envelope, limit);
  const frames: ServerState[][] = [];
  let cur: ServerState[] = [];
  let used = 0;
  const flush = () => {
    frames.push(cur);
    cur = [];
    used = 0;
  };
  for (const s of servers) {
    const head = bytes(JSON.stringify({ server: s.server, incarnation: s.incarnation, rows: [] }));
    const sized = s.rows.map((row) => ({ row, n: bytes(JSON.stringify(row)) }));
    let i = 0;
    do {
      const entry = (cur.length ? 1 : 0) + head;
      if (cur.length && used + entry + (sized[i]?.n ?? 0) > budget) flush();
      const part: ProtocolRow[] = [];
      used += (cur.length ? 1 : 0) + head;
      while (i < sized.length && (part.length === 0 || used + 1 + sized[i]!.n <= budget)) {
        used += (part.length ? 1 : 0) + sized[i]!.n;
        part.push(sized[i]!.row);
        i++;
      }
      cur.push({ server: s.server, incarnation: s.incarnation, rows: part });
      if (i < sized.length) flush();
    } while (i < sized.length);
  }
  if (cur.length || frames.length === 0) frames.push(cur);
  return frames;
}
