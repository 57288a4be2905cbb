// `tma install-keys` next to a person's own bindings: a key they bound (in their tmux.conf, or on
// the running server) is kept and named, never rebound; the new keys load in a real tmux.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { ScratchTmux, tma } from '../support/scratch-tmux.js';

let t: ScratchTmux;
let home: string;
beforeEach(() => {
  t = new ScratchTmux('keys');
  home = mkdtempSync(join(tmpdir(), 'tma-home-'));
});
afterEach(() => {
  t.kill();
  rmSync(home, { recursive: true, force: true });
});

const env = () => ({ HOME: home, XDG_CONFIG_HOME: join(home, '.config'), TMA_CONFIG_DIR: '' });
const run = (args: string[]) => tma(['-L', t.name, ...args], { env: env() });

it('a tmux.conf that binds h and j: both kept, each conflict named, free keys used instead', async () => {
  const conf = join(home, '.tmux.conf');
  const mine = 'set -g mouse off\nbind h select-pane -L\nbind-key -r j select-pane -D\n';
  writeFileSync(conf, mine);
  t.start();
  const r = await run(['install-keys', '--yes']);
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toContain(`tma: prefix+h is already yours (${conf} line 2: select-pane -L); keeping it, not binding jump home there`);
  expect(r.stdout).toContain(
    `tma: prefix+j is already yours (${conf} line 3: select-pane -D); keeping it, not binding jump to the agent waiting longest there`,
  );
  expect(r.stdout).toContain('jump home goes on prefix+H');
  expect(r.stdout).toContain('jump to the agent waiting longest goes on prefix+J');
  const managed = readFileSync(join(home, '.config/tma/tmux.conf'), 'utf8');
  expect(managed).not.toMatch(/^bind-key [hj] /m);
  expect(managed).toMatch(/^bind-key H .*jump --home/m);
  expect(managed).toMatch(/^bind-key a display-popup -E/m);
  expect(managed).toMatch(/^bind-key G new-window .*watch --table/m);
  expect(managed).toMatch(/^bind-key A run-shell .*act --menu --pane/m);
  // Their lines are untouched; only the marked source line is added.
  const after = readFileSync(conf, 'utf8');
  expect(after.startsWith(mine)).toBe(true);
  expect(after.slice(mine.length)).toMatch(/^source-file .*# tma keys\n$/);
  // Loaded in tmux (the server's $HOME is not ours: the key file is sourced by path after the
  // conf), their h and j still do what they did.
  t.tmux('source-file', conf);
  t.tmux('source-file', join(home, '.config/tma/tmux.conf'));
  expect(t.tmux('list-keys', '-T', 'prefix', 'h')).toContain('select-pane -L');
  expect(t.tmux('list-keys', '-T', 'prefix', 'j')).toContain('select-pane -D');
  expect(t.tmux('list-keys', '-T', 'prefix', 'H')).toContain('jump --home');
  expect(t.tmux('list-keys', '-T', 'prefix', 'a')).toContain('display-popup');
  expect((await run(['install-keys', '--check'])).stdout).toBe('tma: keybindings OK\n');
  // Installing again with the keys loaded asks nothing new and changes nothing.
  const again = await run(['install-keys', '--yes']);
  expect(again.stdout).toContain('tma key bindings already up to date');
});

it('a key bound only on the running server counts as taken; without --yes and a terminal it is left unbound', async () => {
  t.start();
  t.tmux('bind-key', '-T', 'prefix', 'g', 'display-message', 'mine');
  // No terminal: the file change is declined too, so nothing is written at all.
  const r = await run(['install-keys']);
  expect(r.stdout).toContain('tma: prefix+g is already yours (the running tmux server: display-message mine)');
  expect(r.stdout).toContain('jump to the oldest blocked agent left unbound');
  expect(r.stdout).toContain('no changes written');
  const y = await run(['install-keys', '--yes']);
  expect(y.code).toBe(0);
  const managed = readFileSync(join(home, '.config/tma/tmux.conf'), 'utf8');
  expect(managed).not.toMatch(/^bind-key g /m);
  expect(managed).toMatch(/^bind-key G new-window/m);
  // g's offer would be G, which tma uses for the watch: the next free one is M-g.
  expect(managed).toMatch(/^bind-key M-g .*jump --blocked/m);
});
