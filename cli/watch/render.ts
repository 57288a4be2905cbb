// The views' picture: state and size in, lines out (each at most `cols` wide, SGR codes aside).
// Pure, so layout is tested without a terminal; the shell only writes what this returns.

import { ageText } from '../../shared/ls-table.js';
import { safeText } from '../../shared/terminal-text.js';
import { selected, visible, type ViewState } from './model.js';
import { CLASSES, type Klass, type WatchRow } from './rows.js';

export interface Frame {
  cols: number;
  rows: number;
  now: number;
  /** The title's words after "tma watch" / "tma": where the rows come from. */
  source: string;
  table: boolean;
  /** Show the host column (fleet, or rows from several hosts). */
  hosts: boolean;
  /** The selected pane's screen (local rows only), already plain text; null for none. */
  preview: string[] | null;
  /** Why there is no preview, when there is none. */
  previewNote: string | null;
}

export const GLYPH: Record<Klass, string> = { blocked: '⚑', done: '✓', working: '●', idle: '○', unknown: '?' };
const INVERSE = '\x1b[7m';
const BOLD = '\x1b[1m';
const DIM = '\x1b[2m';
const RESET = '\x1b[0m';

/** Agent- and host-provided text never carries a control character onto the screen. */
export function clean(s: string): string {
  return safeText(s);
}

/** Cut to `n` columns (one column per code point; a cut shows as …). */
export function fit(s: string, n: number): string {
  if (n <= 0) return '';
  const cps = [...s];
  if (cps.length <= n) return s;
  return `${cps.slice(0, Math.max(0, n - 1)).join('')}…`;
}

/**
 * Break into lines of at most `n` columns (at spaces where it can), so a long error is read whole
 * rather than cut; at most `max` lines, the last cut with … when even that is not enough.
 */
export function wrap(s: string, n: number, max = 4): string[] {
  if (n <= 0) return [];
  const out: string[] = [];
  let rest = [...s];
  while (rest.length > n && out.length < max - 1) {
    let at = rest.lastIndexOf(' ', n);
    if (at <= 0) at = n;
    out.push(rest.slice(0, at).join('').trimEnd());
    rest = rest.slice(rest[at] === ' ' ? at + 1 : at);
  }
  out.push(fit(rest.join(''), n));
  return out;
}

const pad = (s: string, n: number) => {
  const f = fit(s, n);
  return f + ' '.repeat(Math.max(0, n - [...f].length));
};

/**
 * `<1m`, then `ls`'s `3m`, `2h`, `5d`: coarse, so a label changes at most once a minute and an
 * idle view writes nothing between changes (seconds would repaint every second for no news).
 */
export function age(ms: number): string {
  return ms < 60_000 ? '<1m' : ageText(ms);
}

/** How long until `age(ms)` reads differently. */
export function untilAgeChange(ms: number): number {
  const a = Math.max(0, ms);
  const unit = a < 3_600_000 ? 60_000 : a < 86_400_000 ? 3_600_000 : 86_400_000;
  return unit - (a % unit);
}

function cells(r: WatchRow, f: Frame, outcome: string | undefined): string {
  const since = r.since_ms > 0 ? age(f.now - r.since_ms) : '-';
  const state = `${GLYPH[r.klass]} ${r.klass}${r.stale ? ' (stale)' : ''}`;
  const repo = r.repo ? `${r.repo}${r.branch ? `@${r.branch}` : ''}` : '';
  const asks = r.klass === 'blocked' ? (r.pending_summary ?? r.detail ?? '') : (r.detail ?? '');
  const parts = [pad(state, 17), pad(since, 4), pad(clean(r.agent), 9)];
  if (f.hosts) parts.push(pad(clean(r.host), 12));
  parts.push(pad(clean(r.locator), 14), pad(clean(repo), 22));
  const tail = outcome ? `[${outcome}] ${clean(asks)}` : clean(asks);
  return `${parts.join(' ')} ${tail}`.trimEnd();
}

function header(f: Frame): string {
  const parts = [pad('STATE', 17), pad('AGE', 4), pad('AGENT', 9)];
  if (f.hosts) parts.push(pad('HOST', 12));
  parts.push(pad('WHERE', 14), pad('REPO', 22), 'ASKS');
  return parts.join(' ');
}

function counts(rows: readonly WatchRow[]): string {
  return CLASSES.map((k) => `${GLYPH[k]}${rows.filter((r) => r.klass === k).length}`).join(' ');
}

function keyHelp(s: ViewState): string {
  if (s.confirm) return 'y confirms, any other key cancels';
  if (s.menu) return 'j/k or ↑/↓ choose  1-9 or enter pick  esc back';
  if (s.mode === 'picker') return 'type to filter  ↑/↓ move  enter jump  tab actions  esc cancel';
  if (s.editing) return 'type to filter  enter keep  esc clear';
  return 'j/k move  a approve  d deny  enter jump  tab actions  / filter  1-5 state 0 all  q quit';
}

/** The question, whole but for what is asked, which gives way when the line is short. */
export function confirmLine(s: ViewState, now: number, cols: number): string | null {
  const c = s.confirm;
  if (!c) return null;
  const asks = clean(c.row.pending_summary ?? c.row.detail ?? 'nothing stated');
  const since = c.row.since_ms > 0 ? `, ${age(now - c.row.since_ms)}` : '';
  const head = clean(`${c.label} ${c.row.agent} on ${c.row.host} ${c.row.locator} (${c.row.pane}${since})? asks: `);
  const tail = ' [y/N]';
  const room = cols - [...head].length - tail.length;
  return room >= 8 ? `${head}${fit(asks, room)}${tail}` : `${fit(`${head}${asks}`, cols - tail.length)}${tail}`;
}

/** The list's lines: grouped under class headings, or (table) one header and flat rows. */
function listLines(s: ViewState, f: Frame, room: number): string[] {
  const v = visible(s);
  const sel = selected(s);
  if (v.length === 0) {
    const why = s.shown.length === 0 ? 'no agents' : 'no agent matches the filter';
    return [`${DIM}  ${why}${RESET}`];
  }
  type Line = { text: string; row: WatchRow | null };
  const lines: Line[] = [];
  if (f.table) lines.push({ text: `  ${header(f)}`, row: null });
  let last: Klass | null = null;
  for (const r of v) {
    if (!f.table && r.klass !== last) {
      lines.push({ text: `${r.klass.toUpperCase()} (${v.filter((x) => x.klass === r.klass).length})`, row: null });
      last = r.klass;
    }
    lines.push({ text: `${r.key === sel?.key ? '>' : ' '} ${cells(r, f, s.outcomes.get(r.key))}`, row: r });
  }
  // Scroll so the selected row stays in view.
  const at = Math.max(
    0,
    lines.findIndex((l) => l.row?.key === sel?.key),
  );
  const start = lines.length <= room ? 0 : Math.min(Math.max(0, at - Math.floor(room / 2)), lines.length - room);
  return lines.slice(start, start + room).map((l) => {
    const t = fit(l.text, f.cols);
    if (l.row === null) return `${BOLD}${t}${RESET}`;
    return l.row.key === sel?.key ? `${INVERSE}${pad(t, f.cols)}${RESET}` : t;
  });
}

function menuLines(s: ViewState, f: Frame): string[] {
  const m = s.menu!;
  const out = [`${BOLD}${fit(clean(`actions for ${m.row.agent} on ${m.row.host} ${m.row.locator}`), f.cols)}${RESET}`];
  m.items.forEach((it, i) => {
    const why = it.refusal === null ? '' : `  — would not fire: ${it.refusal}`;
    const text = fit(`${i === m.index ? '>' : ' '} ${i + 1}. ${it.label} (${it.action})${why}`, f.cols);
    out.push(i === m.index ? `${INVERSE}${pad(text, f.cols)}${RESET}` : it.refusal === null ? text : `${DIM}${text}${RESET}`);
  });
  return out;
}

export function render(s: ViewState, f: Frame): string[] {
  const title = `${s.mode === 'picker' ? 'tma' : 'tma watch'} — ${f.source}   ${counts(s.shown)}`;
  const top = [fit(clean(title), f.cols)];
  for (const [host, what] of [...s.hostTrouble].sort(([a], [b]) => a.localeCompare(b))) top.push(...wrap(clean(`host ${host}: ${what}`), f.cols, 3));
  if (s.mode === 'picker' || s.editing || s.filter) top.push(fit(`filter: ${clean(s.filter)}${s.editing ? '▏' : ''}`, f.cols));
  if (s.klass) top.push(fit(`showing ${s.klass} only (0 shows all)`, f.cols));
  const bottom: string[] = [];
  const confirm = confirmLine(s, f.now, f.cols);
  if (confirm) bottom.push(`${BOLD}${confirm}${RESET}`);
  else if (s.notice) bottom.push(...wrap(clean(s.notice), f.cols, 4));
  bottom.push(`${confirm ? BOLD : DIM}${fit(keyHelp(s), f.cols)}${RESET}`);
  const room = Math.max(1, f.rows - top.length - bottom.length);
  let middle: string[];
  if (s.menu) middle = menuLines(s, f).slice(0, room);
  else {
    const wantPreview = s.mode === 'watch' && (f.preview !== null || f.previewNote !== null) && room >= 10;
    const listRoom = wantPreview ? Math.max(3, Math.ceil(room / 2)) : room;
    middle = listLines(s, f, listRoom);
    if (wantPreview) {
      const sel = selected(s);
      const previewRoom = room - middle.length - 1;
      const head = sel ? `── ${sel.pane} ${sel.locator} ` : '── ';
      middle.push(`${DIM}${fit(clean(head) + '─'.repeat(f.cols), f.cols)}${RESET}`);
      const body = f.preview ? f.preview.slice(-previewRoom) : [f.previewNote ?? ''];
      middle.push(...body.slice(0, previewRoom).map((l) => fit(clean(l), f.cols)));
    }
  }
  while (top.length + middle.length + bottom.length < f.rows) middle.push('');
  return [...top, ...middle, ...bottom].slice(0, f.rows);
}
