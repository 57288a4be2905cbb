// The closed vocabularies of the pane-option contract, and the one open one (detail).
// Everything that reads or writes @agent_* options, on either side of the wire, uses these.

export const STATES = ['idle', 'working', 'blocked', 'unknown'] as const;
export type State = (typeof STATES)[number];

/** `legacy activity` is accepted on read only; nothing we write uses it. */
export const SOURCES = ['hook', 'capture', 'process', 'activity'] as const;
export type Source = (typeof SOURCES)[number];

/** Disjoint classes used by counts and edges: `done` is idle with attention. */
export const CLASSES = ['blocked', 'working', 'done', 'idle', 'unknown'] as const;
export type StateClass = (typeof CLASSES)[number];

/** Selector / --until vocabulary: the four states plus the `done` pseudo-state. */
export const SELECTOR_TOKENS = ['idle', 'working', 'blocked', 'unknown', 'done'] as const;
export type SelectorToken = (typeof SELECTOR_TOKENS)[number];

/** Sort rank used by every row list: who needs a human first. */
export const STATE_RANK: Record<State, number> = { blocked: 0, working: 1, idle: 2, unknown: 3 };

/** Detail tokens a manifest may declare or emit. The charset keeps tmux formats intact. */
export const DETAIL_TOKEN = /^[a-z0-9_-]+$/;
export const DECLARED_DETAILS = ['permission', 'question', 'error', 'rate_limit', 'background', 'compacting'] as const;

export function isState(v: unknown): v is State {
  return typeof v === 'string' && (STATES as readonly string[]).includes(v);
}

export function isSource(v: unknown): v is Source {
  return typeof v === 'string' && (SOURCES as readonly string[]).includes(v);
}

export function isDetailToken(v: unknown): v is string {
  return typeof v === 'string' && DETAIL_TOKEN.test(v);
}

/** The disjoint class of a row: `done` wins over `idle` when attention is up. */
export function classOf(state: State, attention: boolean): StateClass {
  return state === 'idle' && attention ? 'done' : state;
}

/** Subset reading (selectors, --until): `idle` also matches done panes; `done` only done ones. */
export function matchesToken(token: SelectorToken, state: State, attention: boolean): boolean {
  if (token === 'done') return state === 'idle' && attention;
  return token === state;
}
