// Running an exec action's command: `sh -c` verbatim, in its own process group so a deadline
// takes the whole tree down, with the TMA_* context in the environment.

import { spawn } from 'node:child_process';
import { constants } from 'node:os';

export type ExecEnd = { kind: 'exited'; code: number } | { kind: 'timeout' } | { kind: 'error'; message: string };

/** A child killed by signal N reports 128+N, as a shell would. */
export function exitCodeOf(code: number | null, signal: NodeJS.Signals | null): number {
  if (code !== null) return code;
  const n = signal ? (constants.signals as Record<string, number>)[signal] : undefined;
  return 128 + (n ?? 0);
}

function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // the group is already gone
  }
}

export function runCommand(command: string, env: Record<string, string>, timeoutMs: number, stdio: 'inherit' | 'ignore'): Promise<ExecEnd> {
  return new Promise((resolve) => {
    let settled = false;
    const finish = (end: ExecEnd): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(end);
    };
    const child = spawn('sh', ['-c', command], { env, stdio, detached: true });
    const timer = setTimeout(() => {
      if (child.pid !== undefined) killGroup(child.pid);
      finish({ kind: 'timeout' });
    }, timeoutMs);
    child.on('error', (e) => finish({ kind: 'error', message: `cannot run sh: ${e.message}` }));
    child.on('exit', (code, signal) => finish({ kind: 'exited', code: exitCodeOf(code, signal) }));
  });
}
