// Cells of the run, gathered across test files into one JSON-lines file the global teardown
// prints as the table (its path is set by the global setup before any worker starts).

import { appendFileSync } from 'node:fs';
import type { CellRecord } from './scenario.js';

export function record(cell: CellRecord): void {
  const path = process.env.TMA_AGENTS_RESULTS;
  if (path) appendFileSync(path, `${JSON.stringify(cell)}\n`);
}

const short = (s: string | undefined) => s ?? '·';

/** The table: one line per cell, the verdict at each phase and what the fake server received. */
export function table(cells: CellRecord[]): string {
  const head = [
    'agent',
    'version',
    'case',
    'hooks',
    'rows',
    'collector',
    'approve',
    'idle',
    'working',
    'blocked',
    '+1s',
    'final',
    'results',
    'ran',
    'answer outcome',
    'ls@+0.5s ms',
    'summary',
    'notes',
  ];
  const rows = cells.map((c) => {
    // How long the reading begun 0.5 s after the paint took: a slow machine shows here.
    const lat = c.blocked ? String(c.blocked.end - c.blocked.at) : '·';
    const after = c.after
      ? `${c.after.ls.state}${c.after.waitSaysBlocked ? '/wait:blocked' : ''}${c.after.status.blocked > 0 ? '/status:blocked' : ''}${c.after.hub && c.after.hub.state === 'blocked' ? '/hub:blocked' : ''}`
      : undefined;
    return [
      c.agent,
      c.version ?? '·',
      c.case ?? 'approve',
      c.hooks ? 'hooks' : 'none',
      String(c.rows),
      c.collector ? 'yes' : 'no',
      c.via,
      short(c.idle?.state),
      short(c.working?.state),
      short(c.blocked?.state),
      short(after),
      short(c.final?.state),
      `${c.toolResults}${c.rejected ? ` (${c.rejected} refused)` : ''}`,
      String(c.ran),
      c.answers?.join(' ') ?? (c.approve ? `${c.approve.outcome}${c.approve.reason ? `/${c.approve.reason}` : ''}` : '·'),
      lat,
      (c.via === 'hub' ? c.hubBlocked?.pending_summary : c.blocked?.pending_summary)?.slice(0, 40) ?? (c.blocked ? 'null' : '·'),
      [
        c.enterAgain ? `enter pressed ${c.enterAgain + 1}×` : '',
        c.dialogActs?.length ? `start-up dialog: ${c.dialogActs.join(', ')}` : '',
        c.error ? c.error.split('\n')[0]!.slice(0, 50) : '',
      ]
        .filter(Boolean)
        .join('; ') || '·',
    ];
  });
  const width = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) =>
    r
      .map((v, i) => v.padEnd(width[i]!))
      .join('  ')
      .trimEnd();
  return [line(head), line(width.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}
