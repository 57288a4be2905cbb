// What a terminal view shows of one agent pane, from either source: a local cycle's row or a hub's
// fleet row. Both reduce to the same shape so that ordering, rendering and keys never ask where a
// row came from; `local` says whether its screen is on this machine (only then is it previewed).

import type { FleetRow, HostStatus } from '../../shared/fleet.js';
import type { AgentRow } from '../../shared/row.js';

/** The disjoint classes, in the order a person deals with them. */
export const CLASSES = ['blocked', 'done', 'working', 'idle', 'unknown'] as const;
export type Klass = (typeof CLASSES)[number];

export interface WatchRow {
  /** `host server pane`: the identity a row keeps while its state moves. */
  key: string;
  host: string;
  server: string;
  pane: string;
  agent: string;
  klass: Klass;
  detail: string | null;
  /** On this viewer's clock (a fleet row's host clock offset is taken out). */
  since_ms: number;
  episode_ms: number;
  locator: string;
  repo: string | null;
  branch: string | null;
  pending_summary: string | null;
  prompt_id: string | null;
  permission_request: string | null;
  /** The host stopped confirming this row (fleet only). */
  stale: boolean;
  local: boolean;
}

export const rowKey = (host: string, server: string, pane: string) => `${host}\u0000${server}\u0000${pane}`;

function klassOf(r: { state: string; done: boolean }): Klass {
  if (r.done) return 'done';
  return (CLASSES as readonly string[]).includes(r.state) ? (r.state as Klass) : 'unknown';
}

export function fromLocal(r: AgentRow): WatchRow {
  return {
    key: rowKey(r.host, r.server, r.pane),
    host: r.host,
    server: r.server,
    pane: r.pane,
    agent: r.agent,
    klass: klassOf(r),
    detail: r.detail,
    since_ms: r.since_ms,
    episode_ms: r.episode_ms,
    locator: r.locator,
    repo: r.repo,
    branch: r.branch,
    pending_summary: r.pending_summary,
    prompt_id: r.prompt_id ?? null,
    permission_request: r.permission_request,
    stale: false,
    local: true,
  };
}

/** `offsetMs`: how far the row's host clock runs ahead of the hub's (0 when unknown). */
export function fromFleet(r: FleetRow, offsetMs: number, hostStale: boolean): WatchRow {
  const shift = (t: number) => (t > 0 ? t - offsetMs : t);
  return {
    key: rowKey(r.host, r.server, r.pane),
    host: r.host,
    server: r.server,
    pane: r.pane,
    agent: r.agent,
    klass: klassOf(r),
    detail: r.detail,
    since_ms: shift(r.since_ms),
    episode_ms: r.episode_ms,
    locator: r.locator,
    repo: r.repo,
    branch: r.branch,
    pending_summary: r.pending_summary,
    prompt_id: r.prompt_id ?? null,
    permission_request: r.permission_request,
    stale: r.stale || hostStale,
    local: false,
  };
}

/** Blocked first, then done, working, idle, unknown; the longest waiting first within a class. */
export function ordered(rows: readonly WatchRow[]): WatchRow[] {
  const rank = (k: Klass) => CLASSES.indexOf(k);
  return [...rows].sort(
    (a, b) =>
      rank(a.klass) - rank(b.klass) ||
      (a.since_ms || Number.MAX_SAFE_INTEGER) - (b.since_ms || Number.MAX_SAFE_INTEGER) ||
      a.host.localeCompare(b.host) ||
      a.locator.localeCompare(b.locator) ||
      a.key.localeCompare(b.key),
  );
}

/** A host's status as the view words it: null while it is fine. */
export function hostTrouble(h: Pick<HostStatus, 'stale' | 'reachable' | 'reason'>): string | null {
  if (h.stale) return h.reason ? `stale (${h.reason})` : 'stale';
  if (!h.reachable) return h.reason ? `unreachable (${h.reason})` : 'unreachable';
  return null;
}
