// The picker (bare `tma` on a terminal) and `tma act --menu`, in a real terminal: a pane of a
// scratch tmux server with a client attached, driven with send-keys (the menu through the
// client's own terminal), over stand-in agents that log every byte they receive.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { ScratchTmux, tma, waitFor, type StandIn } from '../support/scratch-tmux.js';
import { tmaLine, tuiPane, type TuiPane } from '../support/tui-pane.js';

let s: ScratchTmux;
let env: Record<string, string>;
let client: ChildProcess | null = null;
let clientScreen = '';

beforeEach(() => {
  s = new ScratchTmux('pick');
  writeFileSync(join(s.dir, 'config.toml'), '[fold]\nfreshness_secs = 0\n');
  mkdirSync(join(s.dir, 'state'));
  mkdirSync(join(s.dir, 'cfg'));
  env = { TMA_CONFIG: join(s.dir, 'config.toml'), XDG_STATE_HOME: join(s.dir, 'state'), XDG_CONFIG_HOME: join(s.dir, 'cfg') };
});

afterEach(() => {
  client?.kill('SIGKILL');
  client = null;
  s.kill();
});

const settle = (ms = 500) => new Promise((r) => setTimeout(r, ms));

async function setup(): Promise<{ blocked: StandIn; working: StandIn; t: TuiPane; name: string }> {
  const working = await s.standIn(s.start(), 'claude', 'claude-working.txt');
  const blocked = await s.standIn(s.newPane(), 'claude', 'claude-permission-dialog.txt');
  const t = tuiPane(s, 120, 30);
  // The client's terminal sizes the window it shows: as wide as the pane was made.
  client = spawn('script', ['-qfc', `stty cols 120 rows 31; tmux -L ${s.name} attach -t tui`, '/dev/null'], {
    env: { ...process.env, TMUX: '', TERM: 'xterm' },
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  client.stdout!.on('data', (b: Buffer) => (clientScreen += b.toString('utf8')));
  let name = '';
  await waitFor(() => (name = s.tmux('list-clients', '-F', '#{client_name}').trim()) !== '', 'an attached client');
  expect(where(name)).toBe('tui:0.0');
  return { blocked, working, t, name };
}

// list-clients, not display-message -c: the latter's formats follow the "best" session, which a
// control-mode client (the view's own tmux link) can change.
const where = (name: string) =>
  s
    .tmux('list-clients', '-F', '#{client_name} #{session_name}:#{window_index}.#{pane_index}')
    .split('\n')
    .find((l) => l.startsWith(`${name} `))
    ?.slice(name.length + 1) ?? '';

describe('the picker', () => {
  test('filters fuzzily from the first key; Enter jumps the client to that pane', async () => {
    const { t, name } = await setup();
    expect(where(name)).toBe('tui:0.0');
    t.type(tmaLine(env, ['--socket-name', s.name]));
    t.keys('Enter');
    await t.until((x) => x.includes('filter:') && x.includes('main:1.0') && x.includes('main:0.0'), 'the picker with both agents');
    t.type('wor');
    await t.until((x) => x.includes('main:0.0') && !x.includes('main:1.0'), 'only the working agent left');
    t.keys('Enter');
    await waitFor(() => where(name) === 'main:0.0', 'the client on the chosen pane');
    await t.until((x) => !x.includes('filter:'), 'the picker gone');
  });

  test('Esc cancels: nothing moves, nothing is sent', async () => {
    const { blocked, t, name } = await setup();
    t.type(tmaLine(env, ['--socket-name', s.name]));
    t.keys('Enter');
    await t.until((x) => x.includes('filter:') && x.includes('main:1.0'), 'the picker');
    t.keys('Escape');
    await t.until((x) => !x.includes('filter:'), 'the picker gone');
    await settle();
    expect(where(name)).toBe('tui:0.0');
    expect(blocked.keys()).toBe('');
  });

  test("Tab opens the row's action menu: what would fire and why the rest would not; approve asks y, then sends one key", async () => {
    const { blocked, working, t } = await setup();
    t.type(tmaLine(env, ['--socket-name', s.name]));
    t.keys('Enter');
    await t.until((x) => x.includes('filter:') && x.includes('main:1.0'), 'the picker');
    t.type('blo');
    await t.until((x) => !x.includes('main:0.0'), 'only the blocked agent');
    t.keys('Tab');
    const menu = await t.until((x) => x.includes('actions for claude'), 'the action menu');
    expect(menu).toMatch(/> 1\. Approve permission request \(approve\)/);
    expect(menu).toMatch(/3\. Interrupt the running turn \(interrupt\) +— would not fire: gated/);
    t.keys('3');
    await t.until((x) => x.includes('interrupt would not fire'), 'a refused choice says why');
    t.keys('Enter');
    await t.until((x) => x.includes('Approve claude on') && x.includes('y confirms'), 'the confirmation');
    expect(blocked.keys()).toBe('');
    t.keys('y');
    await t.until((x) => x.includes('[sent]'), 'the outcome on the row');
    await settle();
    expect(blocked.keys()).toBe('1');
    expect(working.keys()).toBe('');
  });
});

describe('tma act --menu', () => {
  test('on a terminal: lists the actions with why not, asks, then sends exactly one key', async () => {
    const { blocked, t } = await setup();
    t.type(tmaLine(env, ['--socket-name', s.name, 'act', '--menu', '--pane', blocked.pane]));
    t.keys('Enter');
    const menu = await t.until((x) => x.includes('choose a number'), 'the menu');
    expect(menu).toContain('1. Approve permission request (approve)');
    expect(menu).toMatch(/4\. Compact the conversation \(compact\) — would not fire: gated/);
    t.keys('1', 'Enter');
    await t.until((x) => x.includes('[y/N]') && x.includes('Approve claude on'), 'the confirmation');
    expect(blocked.keys()).toBe('');
    t.keys('y', 'Enter');
    await t.until((x) => x.includes(`approve ${blocked.pane}: sent`), 'the outcome');
    await settle();
    expect(blocked.keys()).toBe('1');
  });

  test('from a key binding (no terminal): a tmux menu on the client; a choice asks y first, then sends one key', async () => {
    const { blocked, name } = await setup();
    clientScreen = '';
    const m = tma(['--socket-name', s.name, 'act', '--menu', '--pane', blocked.pane], { env, timeoutMs: 30_000 });
    await waitFor(() => clientScreen.includes('tma act: claude') && clientScreen.includes('running turn: gated'), 'the menu drawn on the client', 15_000);
    client!.stdin!.write('1');
    expect(await m).toMatchObject({ code: 0, stderr: '' });
    await waitFor(() => clientScreen.includes('(y/n)'), 'the confirmation prompt', 10_000);
    await settle();
    expect(blocked.keys()).toBe('');
    client!.stdin!.write('y');
    await waitFor(() => blocked.keys() !== '', 'the key at the agent', 15_000);
    await settle(800);
    expect(blocked.keys()).toBe('1');
    expect(name).not.toBe('');
  });

  test('a pane with no agent is exit 3; no pane outside tmux is exit 2', async () => {
    s.start();
    const gone = await tma(['--socket-name', s.name, 'act', '--menu', '--pane', '%99'], { env });
    expect(gone.code).toBe(3);
    const none = await tma(['--socket-name', s.name, 'act', '--menu'], { env });
    expect(none).toMatchObject({ code: 2, stderr: 'tma: act --menu needs --pane ID (or run it inside tmux)\n' });
  });
});
