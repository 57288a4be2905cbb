// Ending what a test started: every child still running is SIGKILLed and awaited, so no test
// leaves a process behind for the next one.

import { spawn, type ChildProcess } from 'node:child_process';

export async function killChildren(children: ChildProcess[]): Promise<void> {
  for (const c of children.splice(0)) {
    if (c.exitCode === null && c.signalCode === null) {
      const gone = new Promise((r) => c.once('exit', r));
      c.kill('SIGKILL');
      await gone;
    }
  }
}

export interface Logged {
  child: ChildProcess;
  /** Its stdout and stderr so far, interleaved as they came. */
  out(): string;
}

/**
 * `cmd args` outside tmux (TMUX and TMUX_PANE emptied, logs at info), recorded in `children`
 * for killChildren, its output kept for the test to read.
 */
export function launchLogged(children: ChildProcess[], cmd: string, args: string[], env: NodeJS.ProcessEnv, cwd?: string): Logged {
  const child = spawn(cmd, args, {
    env: { ...process.env, TMUX: '', TMUX_PANE: '', TMA_LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(cwd ? { cwd } : {}),
  });
  children.push(child);
  let text = '';
  child.stdout.on('data', (d) => (text += String(d)));
  child.stderr.on('data', (d) => (text += String(d)));
  return { child, out: () => text };
}
