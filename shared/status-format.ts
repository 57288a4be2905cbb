// `status` renderings of a set of rows: counts in disjoint classes (done is not idle).

import { CLASSES, classOf, type State, type StateClass } from './tokens.js';

export type Counts = Record<StateClass, number>;

export interface CountableRow {
  pane: string;
  agent: string;
  state: State;
  attention: boolean;
  since_ms: number;
  host?: string;
  server?: string;
}

export function countRows(rows: readonly CountableRow[]): Counts {
  const c: Counts = { blocked: 0, working: 0, done: 0, idle: 0, unknown: 0 };
  for (const r of rows) c[classOf(r.state, r.attention)]++;
  return c;
}

const GLYPH: Record<StateClass, string> = { blocked: '⚑', working: '●', done: '✓', idle: '○', unknown: '?' };
const COLOUR: Record<StateClass, string> = {
  blocked: 'red', working: 'yellow', done: 'magenta', idle: 'green', unknown: 'colour244',
};

/** Status-bar segments; each is a clickable range so a binding can tell classes apart. */
export function statusTmux(c: Counts): string {
  return CLASSES.filter((k) => c[k] > 0)
    .map((k) => `#[range=user|tma:${k}]#[fg=${COLOUR[k]}]${GLYPH[k]}${c[k]}#[norange]`)
    .join(' ');
}

export function statusPlain(c: Counts): string {
  return CLASSES.filter((k) => c[k] > 0)
    .map((k) => `${GLYPH[k]}${c[k]}`)
    .join(' ');
}

export function statusJson(c: Counts): string {
  const counts = { working: c.working, blocked: c.blocked, idle: c.idle, unknown: c.unknown, done: c.done };
  return `${JSON.stringify({ schema: 1, counts })}\n`;
}

function promLabel(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

/** Prometheus text: class totals, then how long each pane has been in its class. */
export function statusProm(rows: readonly CountableRow[], now: number, withOrigin = false): string {
  const c = countRows(rows);
  const out: string[] = [
    '# HELP tma_agents Agent panes per state class.',
    '# TYPE tma_agents gauge',
  ];
  for (const k of ['working', 'blocked', 'idle', 'unknown', 'done'] as const) out.push(`tma_agents{state="${k}"} ${c[k]}`);
  out.push('# HELP tma_agent_state_seconds Seconds each agent pane has spent in its current state.');
  out.push('# TYPE tma_agent_state_seconds gauge');
  for (const r of rows) {
    const secs = r.since_ms > 0 && r.since_ms <= now ? (now - r.since_ms) / 1000 : 0;
    const origin = withOrigin ? `host="${promLabel(r.host ?? '')}",server="${promLabel(r.server ?? '')}",` : '';
    out.push(
      `tma_agent_state_seconds{${origin}pane="${promLabel(r.pane)}",agent="${promLabel(r.agent)}",state="${classOf(r.state, r.attention)}"} ${secs.toFixed(3)}`,
    );
  }
  return `${out.join('\n')}\n`;
}
