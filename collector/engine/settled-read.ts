// What a one-shot reader may take from tmux without looking at any screen. A collector that
// watches the server's output keeps the heartbeat `@tma_collector_at` fresh and vouches for every
// stamp meanwhile: it looks at a pane as soon as its screen moves. The full cycle and the quick
// `tma status` (cli/status-fast.ts) both judge stamps with these functions, so they agree.

import type { AgentRow } from '../../shared/row.js';
import { compareLocalRows } from '../../shared/selectors.js';
import { isIgnored } from '../core/identity.js';
import { decodeStamp, episodeAt, isInProgress, KEY } from '../core/store-codec.js';
import type { StampedState } from '../core/types.js';
import { LIST_PANES_FORMAT, parsePaneList, type PaneRecord } from './pane-list.js';
import { rowOf } from './rows.js';
import { parseServerFacts, SERVER_FACTS_QUERY } from './server-facts.js';

/** The heartbeat's stored text says a collector vouched for the stamps within the window. */
export function heartbeatVouches(stored: string | undefined, now: number, freshnessMs: number): boolean {
  const at = Number((stored ?? '').trim()) || 0;
  return at !== 0 && at <= now && now - at < freshnessMs;
}

/**
 * Whether the pane may have painted since the stamp was written. tmux 3.3a has no pane_activity
 * and reports `#{window_activity}` (the window's last output) in whole seconds, so only an
 * activity second lying wholly before the stamp proves the screen did not move since; 0 = none.
 */
export function paintedSince(stamp: StampedState, windowActivitySecs: number): boolean {
  return windowActivitySecs > 0 && (windowActivitySecs + 1) * 1000 > stamp.stampedAt;
}

/**
 * A stamp that can stand as it is: whole (not caught mid-write), not from the future, fresh or
 * vouched for, and over a screen that did not move since. A young stamp says nothing about a
 * later paint: a dialog that appeared after a hook's working claim, the work that follows an
 * answered prompt. Unvouched, any such pane is looked at again. A collector's vouch covers its
 * panes (it looks soon after they paint); only a blocked stamp is still checked, since the prompt
 * may have been answered since and a blocked screen does not move until it is.
 * `windowActivitySecs` 0 (unknown, or the caller's own watch covers paints) skips the check.
 */
export function stampStands(prev: StampedState | null, now: number, vouched: boolean, freshnessMs: number, windowActivitySecs = 0): prev is StampedState {
  if (prev === null || isInProgress(prev) || prev.stampedAt > now) return false;
  if ((!vouched || prev.state === 'blocked') && paintedSince(prev, windowActivitySecs)) return false;
  return vouched || now - prev.stampedAt < freshnessMs;
}

export const LIST_CLIENTS_FORMAT = '#{pane_id}\u001f#{client_activity}\u001f#{client_control_mode}';

/** A stamp whose attention a person may have cleared by typing into its pane. */
export function attentionClearable(s: StampedState | null): boolean {
  return s !== null && s.attention && episodeAt(s) !== 0;
}

/**
 * The flagged panes a person has seen: a human (non-control) client shows the pane and typed in a
 * strictly later second than the episode began (input in the same second never clears).
 */
export function seenByClients<T extends { paneId: string; stamp: StampedState }>(flagged: readonly T[], listClientsOut: string): T[] {
  const seen = new Map<string, number>();
  for (const line of listClientsOut.split('\n')) {
    const [pane, activity, control] = line.split('\u001f');
    if (!pane || !/^\d+$/.test(activity ?? '') || (control ?? '0') !== '0') continue;
    seen.set(pane, Math.max(seen.get(pane) ?? 0, Number(activity)));
  }
  return flagged.filter((o) => {
    const act = seen.get(o.paneId);
    return act !== undefined && act * 1000 > episodeAt(o.stamp);
  });
}

/**
 * A cycle's first tmux read: the panes, the last poll time, the heartbeat, and the server's facts
 * while the engine does not know them yet (a one-shot verb's only cycle).
 */
export function listingChain(factsToo: boolean): string[][] {
  return [
    ['list-panes', '-a', '-F', LIST_PANES_FORMAT],
    ['show-options', '-sqv', KEY.lastPoll],
    ['show-options', '-sqv', KEY.collectorAt],
    ...(factsToo ? [[...SERVER_FACTS_QUERY]] : []),
  ];
}

/**
 * One tmux chain with everything `settledRows` needs: a fresh engine's first listing, then the
 * clients. A quick status that declines hands the listing to the full path's first cycle.
 */
export const SETTLED_READ: readonly string[][] = [...listingChain(true), ['list-clients', '-F', LIST_CLIENTS_FORMAT]];

/**
 * The rows a full cycle would return from the outputs of SETTLED_READ, or null when a full cycle
 * could answer differently: no fresh heartbeat, a stamp it would look at again (unreadable,
 * mid-write, from the future), a stamp on an ignored pane (it would be removed), or an attention
 * flag a person has just cleared by typing (it would be unset). A pane without any stamp counts
 * as what the vouching collector judged it: not an agent.
 */
export function settledRows(outs: readonly string[], now: number, freshnessMs: number, host: string): AgentRow[] | null {
  const [listOut, , heartbeat, factsOut, clientsOut] = outs;
  if (!heartbeatVouches(heartbeat, now, freshnessMs)) return null;
  let records: PaneRecord[];
  try {
    records = parsePaneList(listOut ?? '');
  } catch {
    return null;
  }
  const stamped: { paneId: string; rec: PaneRecord; stamp: StampedState }[] = [];
  for (const rec of records) {
    const decoded = decodeStamp(rec.options);
    if (!decoded.ok) return null;
    if (decoded.stamp === null) continue;
    if (isIgnored(rec.options['@agent_ignore']) || !stampStands(decoded.stamp, now, true, freshnessMs, rec.windowActivity)) return null;
    stamped.push({ paneId: rec.paneId, rec, stamp: decoded.stamp });
  }
  if (
    seenByClients(
      stamped.filter((o) => attentionClearable(o.stamp)),
      clientsOut ?? '',
    ).length
  )
    return null;
  const server = parseServerFacts(factsOut ?? '').socketPath;
  const rows = stamped.map((o) => rowOf(o.rec, o.stamp, o.rec.options['@agent_name'] ?? '', { server, host, now }));
  return rows.sort(compareLocalRows);
}
