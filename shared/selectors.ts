// Row selectors shared by local and fleet surfaces (`--state`, `--agent`, `--session`, `--repo`,
// `--branch`, and on the fleet `--host`). Filtering is display-only: it never changes what a cycle
// observes or stamps.

import { SELECTOR_TOKENS, STATE_RANK, matchesToken, type SelectorToken, type State } from './tokens.js';

export interface Selector {
  states: SelectorToken[];
  agent: string | null;
  session: string | null;
  repo: string | null;
  branch: string | null;
  host: string | null;
}

export const EMPTY_SELECTOR: Selector = { states: [], agent: null, session: null, repo: null, branch: null, host: null };

export class SelectorError extends Error {}

/** Parse a comma list of state tokens: trimmed, empties skipped, duplicates dropped. */
export function parseStateList(raw: string): SelectorToken[] {
  const out: SelectorToken[] = [];
  for (const part of raw.split(',')) {
    const t = part.trim();
    if (!t) continue;
    if (!(SELECTOR_TOKENS as readonly string[]).includes(t)) {
      throw new SelectorError(`unknown state "${t}" (expected one of: ${SELECTOR_TOKENS.join(', ')})`);
    }
    if (!out.includes(t as SelectorToken)) out.push(t as SelectorToken);
  }
  if (out.length === 0) throw new SelectorError('empty state list');
  return out;
}

export function isEmptySelector(s: Selector): boolean {
  return s.states.length === 0 && !s.agent && !s.session && !s.repo && !s.branch && !s.host;
}

export interface SelectableRow {
  agent: string;
  state: State;
  attention: boolean;
  locator: string;
  repo: string | null;
  branch: string | null;
  host: string;
}

/** Session name of a locator `session:window.pane` (tmux forbids ':' in session names). */
export function sessionOfLocator(locator: string): string {
  const i = locator.lastIndexOf(':');
  return i < 0 ? locator : locator.slice(0, i);
}

export function selectRow(sel: Selector, row: SelectableRow): boolean {
  if (sel.states.length && !sel.states.some((t) => matchesToken(t, row.state, row.attention))) return false;
  if (sel.agent !== null && row.agent !== sel.agent) return false;
  if (sel.session !== null && sessionOfLocator(row.locator) !== sel.session) return false;
  if (sel.repo !== null && row.repo !== sel.repo) return false;
  if (sel.branch !== null && row.branch !== sel.branch) return false;
  if (sel.host !== null && row.host !== sel.host) return false;
  return true;
}

function locatorParts(locator: string): [string, number, number] {
  const session = sessionOfLocator(locator);
  const rest = locator.slice(session.length + 1);
  const dot = rest.lastIndexOf('.');
  return [session, Number(rest.slice(0, dot)) || 0, Number(rest.slice(dot + 1)) || 0];
}

function compareLocators(a: string, b: string): number {
  const [sa, wa, pa] = locatorParts(a);
  const [sb, wb, pb] = locatorParts(b);
  if (sa !== sb) return sa < sb ? -1 : 1;
  return wa - wb || pa - pb;
}

/** Local order: state rank, then session, window index, pane index. */
export function compareLocalRows(a: { state: State; locator: string }, b: { state: State; locator: string }): number {
  return STATE_RANK[a.state] - STATE_RANK[b.state] || compareLocators(a.locator, b.locator);
}

/** Fleet order: state rank, then host, server, locator. */
export function compareFleetRows(
  a: { state: State; locator: string; host: string; server: string },
  b: { state: State; locator: string; host: string; server: string },
): number {
  return (
    STATE_RANK[a.state] - STATE_RANK[b.state] ||
    (a.host === b.host ? 0 : a.host < b.host ? -1 : 1) ||
    (a.server === b.server ? 0 : a.server < b.server ? -1 : 1) ||
    compareLocators(a.locator, b.locator)
  );
}
