// Run ssh on this terminal (a jump from outside tmux): its exit code is the verb's.

import { spawn } from 'node:child_process';

export function runSsh(argv: readonly string[]): Promise<number> {
  const child = spawn(argv[0]!, argv.slice(1), { stdio: 'inherit' });
  return new Promise<number>((resolve) => {
    child.once('error', (e) => {
      process.stderr.write(`tma: cannot run ssh: ${e.message}\n`);
      resolve(1);
    });
    child.once('exit', (code) => resolve(code ?? 1));
  });
}
