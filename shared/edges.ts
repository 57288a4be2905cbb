// Edges between two observations of a set of rows: appearances, class changes and departures.
// Used by local `subscribe --events` and by the hub's merged stream; rows are keyed by
// (host, server, pane) so one function serves both.

import { classOf, type State, type StateClass } from './tokens.js';

export interface EdgeRow {
  pane: string;
  agent: string;
  state: State;
  attention: boolean;
  detail: string | null;
  locator: string;
  repo: string | null;
  branch: string | null;
  host: string;
  server: string;
}

export interface Edge {
  schema: 1;
  at_ms: number;
  pane: string;
  agent: string;
  from: StateClass | '';
  to: StateClass | '';
  detail: string | null;
  locator: string;
  repo: string | null;
  branch: string | null;
  host: string;
  server: string;
}

/** Exact key order of an edge line; `host` and `server` are our additions at the end. */
export const EDGE_KEYS = ['schema', 'at_ms', 'pane', 'agent', 'from', 'to', 'detail', 'locator', 'repo', 'branch', 'host', 'server'] as const;

export const rowKey = (r: { host: string; server: string; pane: string }) => `${r.host}\u0000${r.server}\u0000${r.pane}`;

export function edge(r: EdgeRow, from: StateClass | '', to: StateClass | '', at: number): Edge {
  return {
    schema: 1,
    at_ms: at,
    pane: r.pane,
    agent: r.agent,
    from,
    to,
    detail: r.detail,
    locator: r.locator,
    repo: r.repo,
    branch: r.branch,
    host: r.host,
    server: r.server,
  };
}

/**
 * New rows in their order (appearances and class changes), then departures in the previous order.
 * A row whose class did not change emits nothing, whatever else moved.
 */
export function diffEdges(prev: readonly EdgeRow[], next: readonly EdgeRow[], at: number): Edge[] {
  const before = new Map(prev.map((r) => [rowKey(r), r]));
  const after = new Set(next.map(rowKey));
  const out: Edge[] = [];
  for (const r of next) {
    const old = before.get(rowKey(r));
    const to = classOf(r.state, r.attention);
    if (!old) out.push(edge(r, '', to, at));
    else {
      const from = classOf(old.state, old.attention);
      if (from !== to) out.push(edge(r, from, to, at));
    }
  }
  for (const r of prev) if (!after.has(rowKey(r))) out.push(edge(r, classOf(r.state, r.attention), '', at));
  return out;
}
