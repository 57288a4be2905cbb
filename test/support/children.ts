// Ending what a test started: every child still running is SIGKILLed and awaited, so no test
// leaves a process behind for the next one.

import type { ChildProcess } from 'node:child_process';

export async function killChildren(children: ChildProcess[]): Promise<void> {
  for (const c of children.splice(0)) {
    if (c.exitCode === null && c.signalCode === null) {
      const gone = new Promise((r) => c.once('exit', r));
      c.kill('SIGKILL');
      await gone;
    }
  }
}
