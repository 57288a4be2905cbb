// The terminal views' state and what each key does to it, with no terminal and no I/O: a key
// press returns the next state and at most one effect (act, jump, open a menu, quit) for the shell
// to carry out. The list a person reads holds still while a confirmation or a menu is open, and
// a confirmation names the row exactly as it was shown, so what gets answered is what was seen.

import { matches } from './fuzzy.js';
import { CLASSES, ordered, type Klass, type WatchRow } from './rows.js';

export type Mode = 'watch' | 'picker';

/** One entry of a row's action menu: fireable, or why not. */
export interface MenuItem {
  action: string;
  label: string;
  /** null when it would fire; else why it would not. */
  refusal: string | null;
}

export interface Confirm {
  action: string;
  label: string;
  row: WatchRow;
}

export interface ViewState {
  mode: Mode;
  /** The latest rows, in view order. */
  rows: WatchRow[];
  /** Rows as shown: equal to `rows` except while a confirmation or a menu holds the list still. */
  shown: WatchRow[];
  cursor: string | null;
  filter: string;
  editing: boolean;
  klass: Klass | null;
  confirm: Confirm | null;
  menu: { row: WatchRow; items: MenuItem[]; index: number } | null;
  /** The last act's outcome on each row (by row key). */
  outcomes: Map<string, string>;
  notice: string | null;
  /** Host name → what is wrong with it, for hosts that are not fine. */
  hostTrouble: Map<string, string>;
}

export type Effect = { kind: 'quit' } | { kind: 'act'; action: string; row: WatchRow } | { kind: 'jump'; row: WatchRow } | { kind: 'menu'; row: WatchRow };

export interface Step {
  state: ViewState;
  effect: Effect | null;
}

export function initialState(mode: Mode): ViewState {
  return {
    mode,
    rows: [],
    shown: [],
    cursor: null,
    filter: '',
    editing: mode === 'picker',
    klass: null,
    confirm: null,
    menu: null,
    outcomes: new Map(),
    notice: null,
    hostTrouble: new Map(),
  };
}

const holding = (s: ViewState) => s.confirm !== null || s.menu !== null;

/** The rows the list shows under the filters, in order. */
export function visible(s: ViewState): WatchRow[] {
  return s.shown.filter((r) => (s.klass === null || r.klass === s.klass) && matches(s.filter, r));
}

/** The selected row: the cursor's, or the first visible one when the cursor's row is gone. */
export function selected(s: ViewState): WatchRow | null {
  const v = visible(s);
  return v.find((r) => r.key === s.cursor) ?? v[0] ?? null;
}

function settle(s: ViewState): ViewState {
  const sel = selected(s);
  return { ...s, cursor: sel?.key ?? null };
}

/** New rows arrived. While a confirmation or menu is open the shown list stays as it was. */
export function withRows(s: ViewState, rows: readonly WatchRow[], hostTrouble?: Map<string, string>): ViewState {
  const next = ordered(rows);
  const keep = holding(s);
  return settle({ ...s, rows: next, shown: keep ? s.shown : next, hostTrouble: hostTrouble ?? s.hostTrouble });
}

export function withOutcome(s: ViewState, key: string, outcome: string): ViewState {
  const outcomes = new Map(s.outcomes);
  outcomes.set(key, outcome);
  return { ...s, outcomes };
}

export function withMenu(s: ViewState, row: WatchRow, items: MenuItem[]): ViewState {
  const first = Math.max(
    0,
    items.findIndex((i) => i.refusal === null),
  );
  return { ...s, menu: { row, items, index: first }, shown: s.shown, notice: items.length ? null : 'no actions for this agent' };
}

function move(s: ViewState, by: number): ViewState {
  const v = visible(s);
  if (v.length === 0) return s;
  const at = Math.max(
    0,
    v.findIndex((r) => r.key === s.cursor),
  );
  const to = Math.min(v.length - 1, Math.max(0, at + by));
  return { ...s, cursor: v[to]!.key, notice: null };
}

const ASKS: Record<string, { label: string; needs: Klass }> = {
  approve: { label: 'Approve', needs: 'blocked' },
  deny: { label: 'Deny', needs: 'blocked' },
};

function ask(s: ViewState, action: string, label: string, row: WatchRow | null): ViewState {
  if (row === null) return { ...s, notice: 'no agent selected' };
  const need = ASKS[action]?.needs;
  if (need !== undefined && row.klass !== need) {
    return { ...s, notice: `nothing to ${action}: ${row.agent} on ${row.host} ${row.locator} is ${row.klass}, not waiting for an answer` };
  }
  if (row.stale) return { ...s, notice: `${row.host} is stale: its rows are not confirmed, so nothing is sent` };
  return { ...s, confirm: { action, label, row }, notice: null };
}

/** Closing a confirmation or a menu lets the list catch up with what arrived meanwhile. */
function release(s: ViewState, notice: string | null): ViewState {
  return settle({ ...s, confirm: null, menu: null, shown: s.rows, notice });
}

/** An action's name as the first word of a question (`approve` → `Approve`). */
export const verbOf = (action: string) => action.charAt(0).toUpperCase() + action.slice(1);

const CLASS_KEYS: Record<string, Klass> = Object.fromEntries(CLASSES.map((k, i) => [String(i + 1), k]));

/** Keys arrive named: a printable character as itself, else up down enter tab esc backspace ctrl-c. */
export function press(s: ViewState, key: string): Step {
  const none = (state: ViewState): Step => ({ state, effect: null });
  if (key === 'ctrl-c') return { state: s, effect: { kind: 'quit' } };

  if (s.confirm !== null) {
    const c = s.confirm;
    if (key === 'y' || key === 'Y')
      return {
        state: release(s, `${c.action} sent to ${c.row.agent} on ${c.row.host} ${c.row.locator}…`),
        effect: { kind: 'act', action: c.action, row: c.row },
      };
    return none(release(s, `${c.action} cancelled`));
  }

  if (s.menu !== null) {
    const m = s.menu;
    if (key === 'esc' || key === 'q') return none(release(s, null));
    if (key === 'down' || key === 'ctrl-n' || (s.mode === 'watch' && key === 'j'))
      return none({ ...s, menu: { ...m, index: Math.min(m.items.length - 1, m.index + 1) } });
    if (key === 'up' || key === 'ctrl-p' || (s.mode === 'watch' && key === 'k')) return none({ ...s, menu: { ...m, index: Math.max(0, m.index - 1) } });
    const n = /^[1-9]$/.test(key) ? Number(key) - 1 : key === 'enter' ? m.index : -1;
    const item = m.items[n];
    if (item === undefined) return none(s);
    if (item.refusal !== null) return none({ ...s, notice: `${item.action} would not fire: ${item.refusal}` });
    // The menu was opened on the row as it was then; the confirmation names that same row.
    return none({ ...s, menu: null, confirm: { action: item.action, label: verbOf(item.action), row: m.row }, notice: null });
  }

  if (s.editing) {
    if (key === 'esc') return s.mode === 'picker' ? { state: s, effect: { kind: 'quit' } } : none(settle({ ...s, editing: false, filter: '' }));
    if (key === 'backspace') return none(settle({ ...s, filter: s.filter.slice(0, -1) }));
    if (key === 'up' || key === 'ctrl-p') return none(move(s, -1));
    if (key === 'down' || key === 'ctrl-n') return none(move(s, 1));
    if (s.mode === 'picker') {
      const row = selected(s);
      if (key === 'enter') return row ? { state: s, effect: { kind: 'jump', row } } : none({ ...s, notice: 'no agent matches' });
      if (key === 'tab') return row ? { state: s, effect: { kind: 'menu', row } } : none(s);
    } else if (key === 'enter') return none(settle({ ...s, editing: false }));
    if (key.length === 1) return none(settle({ ...s, filter: s.filter + key, notice: null }));
    return none(s);
  }

  const row = selected(s);
  switch (key) {
    case 'q':
    case 'esc':
      return { state: s, effect: { kind: 'quit' } };
    case 'j':
    case 'down':
      return none(move(s, 1));
    case 'k':
    case 'up':
      return none(move(s, -1));
    case 'a':
      return none(ask(s, 'approve', 'Approve', row));
    case 'd':
      return none(ask(s, 'deny', 'Deny', row));
    case 'enter':
      return row ? { state: s, effect: { kind: 'jump', row } } : none(s);
    case 'tab':
      return row ? { state: s, effect: { kind: 'menu', row } } : none(s);
    case '/':
      return none({ ...s, editing: true, notice: null });
    case '0':
      return none(settle({ ...s, klass: null }));
    default: {
      const k = CLASS_KEYS[key];
      if (k !== undefined) return none(settle({ ...s, klass: s.klass === k ? null : k, notice: null }));
      return none(s);
    }
  }
}

/** Opening a confirmation from outside a key (the act menu verb) goes through the same rules. */
export function askFor(s: ViewState, action: string, label: string, row: WatchRow): ViewState {
  return ask(s, action, label, row);
}
