// Integration files run several at once (vitest.config.ts). Each gets folders of its own for what
// tmux and tma otherwise keep per user: tmux's socket folder (a `-L` name lands in
// $TMUX_TMPDIR/tmux-<uid>, and a collector follows every server it finds there), the collector's
// wake folder, its state and its cache. Two files then never see each other's servers, hook
// sockets, outboxes or receipts. Children inherit these through process.env.

import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Each variable and its folder under the root. */
export const PRIVATE_DIRS = { TMUX_TMPDIR: 'tmux', XDG_RUNTIME_DIR: 'run', XDG_STATE_HOME: 'state', XDG_CACHE_HOME: 'cache' } as const;

/** Makes a fresh root, points each variable in `env` at its folder there; returns the root. */
export function usePrivateDirs(env: NodeJS.ProcessEnv = process.env): string {
  // Short: a tmux socket path must fit the 108 bytes of a unix socket address.
  const root = mkdtempSync(join(tmpdir(), 'tma-w-'));
  for (const [name, sub] of Object.entries(PRIVATE_DIRS)) {
    mkdirSync(join(root, sub), { mode: 0o700 });
    env[name] = join(root, sub);
  }
  return root;
}

/**
 * Ends any tmux server still listening in the root's socket folder (a test that failed half-way
 * can skip its own teardown), then removes the root. Returns how many sockets it found.
 */
export function dropPrivateDirs(root: string): number {
  const sockets = join(root, PRIVATE_DIRS.TMUX_TMPDIR, `tmux-${process.getuid?.() ?? 0}`);
  let names: string[] = [];
  try {
    names = readdirSync(sockets);
  } catch {
    // No server was ever started here.
  }
  for (const name of names) spawnSync('tmux', ['-S', join(sockets, name), 'kill-server'], { timeout: 5000 });
  rmSync(root, { recursive: true, force: true });
  return names.length;
}
