// The forms of `ls` and `subscribe` a person reads on a terminal: a header, ages rather than epoch
// milliseconds, words rather than `1` flags, and where a row lives when there is more than one
// place. Scripts get the TSV (ls-text.ts) and JSON forms, which never change for this.

import type { Edge } from './edges.js';
import { safeText } from './terminal-text.js';

/** `42s`, `3m`, `2h`, `5d`: how long, in the largest unit that is at least one. */
export function ageText(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86400) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}

export interface TableRow {
  pane: string;
  agent: string;
  state: string;
  detail: string | null;
  since_ms: number;
  locator: string;
  attention: boolean | null;
  muted: boolean | null;
  repo: string | null;
  branch: string | null;
  worktree: boolean | null;
  /** Fleet rows: which host; local rows on several servers: which server. */
  host?: string;
  server?: string;
  stale?: boolean;
  title?: string;
  /** What a blocked row asks, already worded (fleet: its host's summary or "not shared by this host"). */
  asks?: string;
}

/** The flags as words: `attention`, `muted`, `worktree`, `stale`, joined by commas. */
export function flagWords(r: TableRow): string {
  return [r.attention ? 'attention' : '', r.muted ? 'muted' : '', r.worktree ? 'worktree' : '', r.stale ? 'stale' : ''].filter(Boolean).join(',');
}

/** The socket path as a person knows it: the `-L` name when it is tmux's usual place, else the path. */
export function serverLabel(server: string): string {
  const m = /\/tmux-\d+\/([^/]+)$/.exec(server);
  return m ? m[1]! : server;
}

const cut = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/**
 * The table: a header, then one aligned line per row. `where` adds a HOST and/or SERVER column
 * (only when the rows come from more than one); `now` dates the ages.
 */
export function lsTable(rows: readonly TableRow[], now: number, opts: { host?: boolean; server?: boolean; title?: boolean } = {}): string {
  if (rows.length === 0) return '';
  const cols: { head: string; cell: (r: TableRow) => string; max?: number }[] = [];
  if (opts.host) cols.push({ head: 'HOST', cell: (r) => r.host ?? '' });
  if (opts.server) cols.push({ head: 'SERVER', cell: (r) => serverLabel(r.server ?? ''), max: 24 });
  cols.push(
    { head: 'PANE', cell: (r) => r.pane },
    { head: 'AGENT', cell: (r) => r.agent },
    { head: 'STATE', cell: (r) => (r.detail ? `${r.state} (${r.detail})` : r.state) },
    { head: 'AGE', cell: (r) => ageText(now - r.since_ms) },
    { head: 'WHERE', cell: (r) => r.locator, max: 28 },
    { head: 'REPO', cell: (r) => (r.repo ? `${r.repo}${r.branch ? `@${r.branch}` : ''}` : ''), max: 32 },
    { head: 'FLAGS', cell: flagWords },
  );
  if (opts.title) cols.push({ head: 'TITLE', cell: (r) => r.title ?? '', max: 40 });
  if (rows.some((r) => r.asks)) cols.push({ head: 'ASKS', cell: (r) => r.asks ?? '', max: 60 });
  const cells = rows.map((r) => cols.map((c) => cut(safeText(c.cell(r)), c.max ?? 200)));
  const widths = cols.map((c, i) => Math.max(c.head.length, ...cells.map((row) => row[i]!.length)));
  const line = (vals: string[]) =>
    vals
      .map((v, i) => (i === vals.length - 1 ? v : v.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return `${[line(cols.map((c) => c.head)), ...cells.map(line)].join('\n')}\n`;
}

const clock = (ms: number) => new Date(ms).toTimeString().slice(0, 8);

/** One readable line for a state change on a stream: `12:03:04 build1 %3 claude working → blocked (permission) sess:0.1`. */
export function edgeLine(e: Pick<Edge, 'at_ms' | 'pane' | 'agent' | 'from' | 'to' | 'detail' | 'locator' | 'host'>, withHost: boolean): string {
  const change = e.from === '' ? `appeared ${e.to}` : e.to === '' ? `gone (was ${e.from})` : `${e.from} → ${e.to}`;
  const where = [withHost ? e.host : '', e.pane, e.agent].filter(Boolean).join(' ');
  return safeText(`${clock(e.at_ms)} ${where} ${change}${e.detail && e.to !== '' ? ` (${e.detail})` : ''} ${e.locator}`, 4096);
}

/** The opening lines of a readable stream: each agent as it stands now. */
export function nowLine(r: TableRow, now: number, withHost: boolean): string {
  const where = [withHost ? (r.host ?? '') : '', r.pane, r.agent].filter(Boolean).join(' ');
  return safeText(`${clock(now)} ${where} ${r.state}${r.detail ? ` (${r.detail})` : ''} for ${ageText(now - r.since_ms)} ${r.locator}`, 4096);
}
