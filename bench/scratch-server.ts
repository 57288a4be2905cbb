// Tear-down shared by the benches that run a scratch tmux server: the server, its socket file
// (tmux 3.3a leaves it behind) and the bench's temporary folder; and a hook that runs tear-downs
// however a bench ends, since a tmux server (and a collector whose hub went away) outlives the
// bench that started it.

import { mkdirSync, rmSync } from 'node:fs';
import { constants } from 'node:os';
import { join } from 'node:path';

/**
 * Put this bench's tmux servers in a socket folder of its own (under `dir`), before anything reads
 * TMUX_TMPDIR: a collector the user has running follows every server in the usual folder, and
 * would poll the bench's servers while it measures.
 */
export function privateTmuxDir(dir: string): void {
  process.env.TMUX_TMPDIR = join(dir, 'tmux');
  mkdirSync(process.env.TMUX_TMPDIR, { recursive: true });
}

export function removeScratch(tmux: (...a: string[]) => string, name: string, dir: string): void {
  try {
    tmux('kill-server');
  } catch {
    // already gone
  }
  rmSync(join(process.env.TMUX_TMPDIR || '/tmp', `tmux-${process.getuid?.() ?? 0}`, name), { force: true });
  rmSync(dir, { recursive: true, force: true });
}

const atExit: (() => void)[] = [];

/**
 * Run `fn` (synchronous) when the bench process ends: normally, on an error, or interrupted by
 * Ctrl-C, `timeout` or kill. Last registered runs first.
 */
export function atBenchExit(fn: () => void): void {
  if (atExit.length === 0) {
    process.once('exit', () => {
      for (const f of atExit.reverse()) {
        try {
          f();
        } catch {
          // the rest still runs
        }
      }
    });
    for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(sig, () => process.exit(128 + constants.signals[sig]));
  }
  atExit.push(fn);
}
