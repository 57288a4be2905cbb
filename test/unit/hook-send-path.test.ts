// The Python hook client must name the same wake socket as the collector, or every fast-path
// event silently falls back. Its derivation is checked against wake.ts on paths that exercise
// each rule: directory realpath (not the socket's own), relative paths, missing directories,
// non-ASCII bytes, and the environment's precedence of servers.

import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { canonicalSocketPath, socketPathOfTarget, wakeDir, wakeSocketPath } from '../../collector/fleet/wake.js';
import type { ServerTarget } from '../../collector/tmux/target.js';

const REPO = resolve(import.meta.dirname, '../..');
const SEND = join(REPO, 'bin/tma-hook-send.py');
const root = mkdtempSync(join(tmpdir(), 'tma-hook-path-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

type Env = Record<string, string | undefined>;
const BASE: Env = { PATH: process.env.PATH, HOME: process.env.HOME, XDG_RUNTIME_DIR: join(root, 'run') };

function pythonWakePath(env: Env, socket?: string, cwd = root): string {
  const r = spawnSync('/usr/bin/python3', ['-E', '-S', SEND, '--wake-path', ...(socket === undefined ? [] : [socket])], {
    env: env,
    cwd,
    encoding: 'utf8',
  });
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  return r.stdout.replace(/\n$/, '');
}

const nodeWakePath = (socket: string, env: Env) => wakeSocketPath(canonicalSocketPath(socket), wakeDir(env));

// The directory holding the socket is reached through a symlink; the socket itself is a symlink
// too, which must NOT be followed (tmux reports the directory's realpath, not the link target's).
const realDir = join(root, 'real');
mkdirSync(realDir);
symlinkSync(realDir, join(root, 'via-link'));
writeFileSync(join(realDir, 'target'), '');
symlinkSync(join(realDir, 'target'), join(realDir, 'sock-link'));

it.each([
  ['a plain path', () => join(realDir, 'srv')],
  ['a directory through a symlink', () => join(root, 'via-link', 'srv')],
  ['a socket that is itself a symlink', () => join(realDir, 'sock-link')],
  ['a directory that does not exist', () => join(root, 'missing', 'deeper', 'srv')],
  ['dot segments and doubled slashes', () => `${root}//via-link/./x/../srv`],
  ['non-ASCII bytes', () => join(realDir, 'sérvér-☃')],
])('names the same wake socket as wake.ts for %s', (_what, socket) => {
  const s = socket();
  const fromPython = pythonWakePath(BASE, s);
  expect(fromPython).toBe(nodeWakePath(s, BASE));
  expect(fromPython).toMatch(/\/tma-\d+\/wake-[0-9a-f]{16}\.sock$/);
});

it('resolves a relative socket path from its working directory, as Node does', () => {
  const fromPython = pythonWakePath(BASE, 'via-link/srv', root);
  expect(fromPython).toBe(nodeWakePath(join(root, 'via-link/srv'), BASE));
  // The symlinked directory is resolved: the same file as through the real directory.
  expect(fromPython).toBe(nodeWakePath(join(realDir, 'srv'), BASE));
});

it('distinguishes servers: different sockets give different wake sockets', () => {
  expect(pythonWakePath(BASE, join(realDir, 'a'))).not.toBe(pythonWakePath(BASE, join(realDir, 'b')));
});

it('puts the wake socket under /tmp when XDG_RUNTIME_DIR is unset or empty', () => {
  const s = join(realDir, 'srv');
  for (const xdg of [undefined, '']) {
    const env = { ...BASE, XDG_RUNTIME_DIR: xdg };
    const fromPython = pythonWakePath(env, s);
    expect(fromPython).toBe(nodeWakePath(s, env));
    expect(fromPython.startsWith(`/tmp/tma-${process.getuid!()}/`)).toBe(true);
  }
});

/** The server `tma event` stamps when run by the wrapper with this environment. */
function fallbackTarget(env: Env): ServerTarget {
  if (env.TMA_HOOK_SOCKET) return { kind: 'name', name: env.TMA_HOOK_SOCKET };
  if (env.TMA_SOCKET_PATH) return { kind: 'path', path: env.TMA_SOCKET_PATH };
  const inside = env.TMUX?.split(',')[0];
  return inside ? { kind: 'path', path: inside } : { kind: 'default' };
}

it.each([
  ['-L name wins over everything', { TMA_HOOK_SOCKET: 'work', TMA_SOCKET_PATH: join(realDir, 'p'), TMUX: `${realDir}/t,1,0` }],
  ['-L name under TMUX_TMPDIR', { TMA_HOOK_SOCKET: 'work', TMUX_TMPDIR: join(root, 'via-link') }],
  ['TMA_SOCKET_PATH before $TMUX', { TMA_SOCKET_PATH: join(root, 'via-link', 'p'), TMUX: `${realDir}/t,1,0` }],
  ['the first field of $TMUX', { TMUX: `${join(root, 'via-link')}/t,4242,3` }],
  ['the default server when nothing names one', { TMUX: '' }],
  ['the default server under TMUX_TMPDIR', { TMUX_TMPDIR: realDir }],
])('finds the server from the environment like the fallback does: %s', (_what, extra: Env) => {
  const env = { ...BASE, ...extra };
  const expected = nodeWakePath(socketPathOfTarget(fallbackTarget(env), env), env);
  expect(pythonWakePath(env)).toBe(expected);
});
