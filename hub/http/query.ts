// Query parameters of the fleet read endpoints: the `ls` selectors, strictly. An unknown or empty
// parameter is refused, because a misspelt filter that silently matches everything misleads.

import { EMPTY_SELECTOR, SelectorError, parseStateList, type Selector } from '../../shared/selectors.js';

const SELECTOR_PARAMS = ['state', 'agent', 'host', 'repo', 'branch', 'session'] as const;

export class QueryError extends Error {}

export function selectorFromQuery(q: URLSearchParams, extra: readonly string[] = []): Selector {
  for (const k of new Set(q.keys())) {
    if (!(SELECTOR_PARAMS as readonly string[]).includes(k) && !extra.includes(k)) throw new QueryError(`unknown query parameter "${k}"`);
  }
  const sel: Selector = { ...EMPTY_SELECTOR, states: [] };
  for (const k of SELECTOR_PARAMS) {
    const all = q.getAll(k);
    if (all.length === 0) continue;
    if (k === 'state') {
      try {
        sel.states = parseStateList(all.join(','));
      } catch (e) {
        if (e instanceof SelectorError) throw new QueryError(e.message);
        throw e;
      }
      continue;
    }
    if (all.length > 1) throw new QueryError(`"${k}" given more than once`);
    if (all[0] === '') throw new QueryError(`"${k}" is empty`);
    sel[k] = all[0]!;
  }
  return sel;
}

/** `events=1|true` asks for edges; `0|false` or absent for documents. */
export function eventsFromQuery(q: URLSearchParams): boolean {
  const v = q.get('events');
  if (v === null || v === '0' || v === 'false') return false;
  if (v === '1' || v === 'true') return true;
  throw new QueryError(`"events" must be 1, true, 0 or false`);
}

/**
 * `mode=documents|events|changes`; absent means what `events` says. `changes` sends the document
 * once, then a `changes` line per flush (see README, "Fleet streams").
 */
export function modeFromQuery(q: URLSearchParams): 'documents' | 'events' | 'changes' {
  const m = q.get('mode');
  const events = eventsFromQuery(q);
  if (m === null) return events ? 'events' : 'documents';
  if (q.has('events')) throw new QueryError(`give "mode" or "events", not both`);
  if (m === 'documents' || m === 'events' || m === 'changes') return m;
  throw new QueryError(`"mode" must be documents, events or changes`);
}
