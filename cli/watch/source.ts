// Where a view's rows come from and how its keys reach the world. Acting and jumping run the
// command line itself (`tma act …`, `tma jump …`) as a child: the same broker, gate, lock and
// binders as typing the command, and no second copy of any of it here.

import { execFile } from 'node:child_process';
import type { MenuItem } from './model.js';
import type { WatchRow } from './rows.js';
import { tmaBin } from '../install/paths.js';

export interface Source {
  /** Words for the title: where the rows come from. */
  readonly label: string;
  readonly fleet: boolean;
  /** Calls `onRows` with every new set of rows (and hosts' trouble) until closed. */
  start(onRows: (rows: WatchRow[], trouble: Map<string, string>) => void): void;
  /** The pane's screen as plain lines, for a row whose screen is on this machine; null otherwise. */
  preview(row: WatchRow): Promise<string[] | null>;
  /** Fire a confirmed action; resolves to the outcome a row shows (`sent`, `refused: gated`, …). */
  act(action: string, row: WatchRow): Promise<string>;
  /** Focus the row's pane; resolves to an error line, or null when it worked. */
  jump(row: WatchRow): Promise<string | null>;
  menu(row: WatchRow): Promise<MenuItem[]>;
  close(): void;
}

/** `tma ARGS…` as a child; its exit code and output. */
export function runTma(args: readonly string[], timeoutMs = 45_000): Promise<{ code: number; stdout: string; stderr: string }> {
  const bin = tmaBin(process.env);
  const [cmd, argv] = bin.endsWith('.js') ? [process.execPath, [bin, ...args]] : [bin, [...args]];
  return new Promise((done) => {
    execFile(cmd, argv, { timeout: timeoutMs, encoding: 'utf8', maxBuffer: 4 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0;
      done({ code, stdout, stderr });
    });
  });
}

/** What a row shows after an act: the outcome, with its reason when it has one. */
export function outcomeWord(res: { code: number; stdout: string; stderr: string }): string {
  const line = res.stdout.trim().split('\n').pop() ?? '';
  try {
    const o = JSON.parse(line) as { outcome?: unknown; reason?: unknown };
    if (typeof o.outcome === 'string') return typeof o.reason === 'string' ? `${o.outcome}: ${o.reason}` : o.outcome;
  } catch {
    // Not a result: say what the command said.
  }
  const err =
    res.stderr
      .trim()
      .split('\n')
      .pop()
      ?.replace(/^tma: /, '') ?? '';
  return `error: ${err || `exit ${res.code}`}`;
}

export const errorLine = (res: { code: number; stderr: string }) =>
  res.code === 0
    ? null
    : (res.stderr
        .trim()
        .split('\n')
        .pop()
        ?.replace(/^tma: /, '') ?? `exit ${res.code}`);

/** The flags an act child needs so that it answers exactly the prompt the person saw. */
export function binderFlags(row: WatchRow, slot: string): string[] {
  return [
    '--json',
    '--yes',
    '--slot',
    slot,
    ...(row.episode_ms > 0 ? ['--expect-episode-ms', String(row.episode_ms)] : []),
    ...(row.prompt_id ? ['--expect-prompt', row.prompt_id] : []),
    ...(row.permission_request ? ['--expect-permission-request', row.permission_request] : []),
  ];
}
