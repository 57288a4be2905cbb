// Which pane `tma jump` goes to, and the per-client trail that `--back` and `--home` walk. Pure:
// rows and locators in, a choice out.

import type { AgentRow } from './row.js';

export interface Loc {
  session: string;
  window: number;
  pane: number;
}

export function parseLocator(s: string): Loc | null {
  const m = /^(.*):(\d+)\.(\d+)$/.exec(s.trim());
  return m ? { session: m[1]!, window: Number(m[2]), pane: Number(m[3]) } : null;
}

function byPlace(a: AgentRow, b: AgentRow): number {
  const x = parseLocator(a.locator);
  const y = parseLocator(b.locator);
  if (!x || !y) return a.locator < b.locator ? -1 : a.locator > b.locator ? 1 : 0;
  return x.session < y.session ? -1 : x.session > y.session ? 1 : x.window - y.window || x.pane - y.pane;
}

/** Blocked panes, longest waiting first, then finished-and-unseen ones; from the origin, the next. */
export function pickAttention(rows: AgentRow[], origin: string): AgentRow | null {
  const blocked = rows.filter((r) => r.state === 'blocked').sort((a, b) => a.since_ms - b.since_ms || byPlace(a, b));
  const seen = rows.filter((r) => r.state === 'idle' && r.attention).sort((a, b) => a.since_ms - b.since_ms || byPlace(a, b));
  const queue = [...blocked, ...seen];
  if (queue.length === 0) return null;
  const at = queue.findIndex((r) => r.locator === origin);
  return at < 0 ? queue[0]! : queue[(at + 1) % queue.length]!;
}

export function pickBlocked(rows: AgentRow[]): AgentRow | null {
  return rows.filter((r) => r.state === 'blocked').sort((a, b) => a.since_ms - b.since_ms || byPlace(a, b))[0] ?? null;
}

/** The next agent after the origin in session/window/pane order, wrapping around. */
export function pickNext(rows: AgentRow[], origin: string): AgentRow | null {
  const sorted = [...rows].sort(byPlace);
  if (sorted.length === 0) return null;
  const o = parseLocator(origin);
  if (!o) return sorted[0]!;
  const probe = { locator: origin } as AgentRow;
  return sorted.find((r) => byPlace(r, probe) > 0) ?? sorted[0]!;
}

const STATE_ORDER: Record<string, number> = { blocked: 0, working: 1, idle: 2, unknown: 3 };

export function menuOrder(rows: AgentRow[]): AgentRow[] {
  return [...rows].sort((a, b) => (STATE_ORDER[a.state] ?? 4) - (STATE_ORDER[b.state] ?? 4) || a.since_ms - b.since_ms);
}

function fnv1a32(s: string): number {
  let h = 0x811c9dc5;
  for (const b of new TextEncoder().encode(s)) h = Math.imul(h ^ b, 0x01000193) >>> 0;
  return h >>> 0;
}

/** The server option holding one client's trail. */
export function trailOption(client: string): string {
  return `@tma_origin_${client.replace(/[^A-Za-z0-9]/g, '_')}_${fnv1a32(client).toString(16).padStart(8, '0')}`;
}

export const TRAIL_CAP = 8;

export function pushTrail(trail: string[], origin: string): string[] {
  if (trail[trail.length - 1] === origin) return trail;
  return [...trail, origin].slice(-TRAIL_CAP);
}

/** The most recent valid origin, and what remains. */
export function popTrail(trail: string[]): { to: string | null; rest: string[] } {
  const rest = [...trail];
  while (rest.length) {
    const top = rest.pop()!;
    if (parseLocator(top)) return { to: top, rest };
  }
  return { to: null, rest: [] };
}

export function homeOf(trail: string[]): string | null {
  return trail.find((l) => parseLocator(l) !== null) ?? null;
}

/** How long `jump --menu` keeps its menu open by default: long enough to read nine lines. */
export const MENU_TIMEOUT_DEFAULT_S = 60;

/**
 * How long the menu may stay open, in ms: `--menu-timeout SECS`, else `TMA_JUMP_MENU_TIMEOUT`
 * (which a key binding's run-shell inherits from `tmux set-environment -g`), else the default.
 * A bound is required: tmux answers display-menu only when it closes, and a menu left open
 * would hold this process (and the key binding's run-shell) until someone came back.
 * Throws a one-line reason for a value that is not a positive number of seconds.
 */
export function menuTimeoutMs(flag: string | undefined, env: string | undefined): number {
  const [raw, from] = flag !== undefined ? [flag, '--menu-timeout'] : env ? [env, 'TMA_JUMP_MENU_TIMEOUT'] : [String(MENU_TIMEOUT_DEFAULT_S), 'default'];
  const secs = /^\d+(\.\d+)?$/.test(raw.trim()) ? Number(raw) : NaN;
  if (!(secs > 0) || secs > 86_400) throw new RangeError(`${from} takes seconds between 0 and 86400, not "${raw}"`);
  return Math.round(secs * 1000);
}
