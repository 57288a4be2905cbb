// `status` renderings of a set of rows: counts in disjoint classes (done is not idle).

import { safeText } from './terminal-text.js';
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

/** A class's look in the status formats; `[status]` in config.toml overrides either half. */
export interface StatusStyle {
  glyph: string;
  color: string;
}

export type StatusStyles = Partial<Record<StateClass, Partial<StatusStyle>>>;

// Dark tones: tmux's default bar is green with black text, and the bright basic colours (green
// above all) vanish on it. Each of these keeps at least 3:1 contrast against that green.
export const DEFAULT_STATUS_STYLES: Record<StateClass, StatusStyle> = {
  blocked: { glyph: '⚑', color: 'colour88' },
  working: { glyph: '●', color: 'colour18' },
  done: { glyph: '✓', color: 'colour90' },
  idle: { glyph: '○', color: 'colour22' },
  unknown: { glyph: '?', color: 'colour238' },
};

function styleOf(k: StateClass, styles: StatusStyles): StatusStyle {
  return { ...DEFAULT_STATUS_STYLES[k], ...styles[k] };
}

/**
 * Status-bar segments; each is a clickable range so a binding can tell classes apart, and each
 * ends with `#[default]` so its colour does not run on into whatever the bar shows next.
 */
export function statusTmux(c: Counts, styles: StatusStyles = {}): string {
  return CLASSES.filter((k) => c[k] > 0)
    .map((k) => {
      const s = styleOf(k, styles);
      // A `#` in a glyph would open a tmux format.
      return `#[range=user|tma:${k}]#[fg=${s.color}]${s.glyph.replace(/#/g, '##')}${c[k]}#[norange]#[default]`;
    })
    .join(' ');
}

/** A line of text for scripts and other bars: it ends with a newline, even when empty. */
export function statusPlain(c: Counts, styles: StatusStyles = {}): string {
  const line = CLASSES.filter((k) => c[k] > 0)
    .map((k) => `${styleOf(k, styles).glyph}${c[k]}`)
    .join(' ');
  return `${line}\n`;
}

/**
 * `counts`, plus `context_max` (additive): the fullest context window among the counted rows, so a
 * bar can warn before an agent runs out; null when no row reports one (absence, never 0).
 */
export function statusJson(c: Counts, rows: readonly { context?: number | null }[] = []): string {
  const counts = { working: c.working, blocked: c.blocked, idle: c.idle, unknown: c.unknown, done: c.done };
  let contextMax: number | null = null;
  for (const r of rows) if (typeof r.context === 'number' && (contextMax === null || r.context > contextMax)) contextMax = r.context;
  return `${JSON.stringify({ schema: 1, counts, context_max: contextMax })}\n`;
}

// A label value is host text (a fleet's host and server, an agent's name): controls are shown
// visibly first, so the text a scraper stores and a terminal shows acts on neither.
function promLabel(v: string): string {
  return safeText(v).replace(/\\/g, '\\\\').replace(/"/g, '\\"');
}

/** Prometheus text: class totals, then how long each pane has been in its class. */
export function statusProm(rows: readonly CountableRow[], now: number, withOrigin = false): string {
  const c = countRows(rows);
  const out: string[] = ['# HELP tma_agents Agent panes per state class.', '# TYPE tma_agents gauge'];
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

export const STATUS_FORMATS = ['tmux', 'plain', 'json', 'prom'] as const;
export type StatusFormat = (typeof STATUS_FORMATS)[number];

export function isStatusFormat(f: string): f is StatusFormat {
  return (STATUS_FORMATS as readonly string[]).includes(f);
}

/** `tma status` output for the counted rows, in one of STATUS_FORMATS (the full and the quick path share it). */
export function renderStatus(
  format: StatusFormat,
  rows: readonly (CountableRow & { context?: number | null })[],
  now: number,
  styles: StatusStyles = {},
): string {
  if (format === 'prom') return statusProm(rows, now);
  const c = countRows(rows);
  return format === 'tmux' ? statusTmux(c, styles) : format === 'plain' ? statusPlain(c, styles) : statusJson(c, rows);
}
