// Integration files share the machine with other files running at the same time: each must see
// tmux sockets and tma state of its own, and leave nothing behind.

import { spawnSync } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { dropPrivateDirs, PRIVATE_DIRS, usePrivateDirs } from '../support/private-dirs.js';
import { ScratchTmux } from '../support/scratch-tmux.js';
import { when } from '../support/when.js';

describe('private folders per integration file', () => {
  it('this file runs with its own tmux socket folder and tma state under one fresh root', () => {
    const dirs = Object.keys(PRIVATE_DIRS).map((name) => process.env[name]);
    for (const d of dirs) expect(d && existsSync(d)).toBe(true);
    const root = dirname(dirs[0]!);
    expect(root.startsWith(join(tmpdir(), 'tma-w-'))).toBe(true);
    expect(dirs.every((d) => dirname(d!) === root)).toBe(true);
  });

  it('a scratch server listens in this file’s socket folder, not the shared /tmp/tmux-<uid>', () => {
    const t = new ScratchTmux('priv');
    try {
      t.start();
      const socket = t.tmux('display-message', '-p', '#{socket_path}').trim();
      expect(realpathSync(dirname(socket))).toBe(realpathSync(join(process.env.TMUX_TMPDIR!, `tmux-${process.getuid!()}`)));
    } finally {
      t.kill();
    }
  });

  it('dropping a root ends a server a test left running in it and removes the folders', async () => {
    const env: NodeJS.ProcessEnv = {};
    const root = usePrivateDirs(env);
    const name = `tma-left-${process.pid}`;
    const run = (...args: string[]) =>
      spawnSync('tmux', ['-L', name, '-f', '/dev/null', ...args], { env: { ...process.env, ...env, TMUX: '' }, timeout: 5000, encoding: 'utf8' });
    expect(run('new-session', '-d', '-s', 'x', 'sleep 600').status).toBe(0);
    const pid = Number(run('display-message', '-p', '#{pid}').stdout.trim());
    expect(pid).toBeGreaterThan(0);
    expect(dropPrivateDirs(root)).toBe(1);
    expect(existsSync(root)).toBe(false);
    expect(run('has-session').status).not.toBe(0);
    const alive = () => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    // kill-server returns before the daemonised server has exited.
    await when('the left server to exit', () => (alive() ? undefined : true), 5000, 50);
  });
});
