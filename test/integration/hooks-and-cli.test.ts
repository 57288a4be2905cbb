// The hook wrapper as agents call it, and the one-shot verbs' text forms, on a real server.

import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { REPO, ScratchTmux, tma } from '../support/scratch-tmux.js';
import { SCREENS } from '../support/screens.js';

let t: ScratchTmux;
beforeEach(() => {
  t = new ScratchTmux('hk');
});
afterEach(() => t.kill());

/** Run bin/tma-hook the way an agent's hook does: inside the pane's environment. */
function hook(pane: string, args: string[], stdin = ''): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(join(REPO, 'bin/tma-hook'), args, {
    input: stdin,
    encoding: 'utf8',
    env: { ...process.env, TMUX_PANE: pane, TMA_HOOK_SOCKET: t.name, TMA_BIN: join(REPO, 'bin/tma.js') },
    timeout: 10_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

it('tma-hook stamps from stdin, and from a third argument (codex notify)', async () => {
  const pane = t.start();
  await t.standIn(pane, 'codex', SCREENS.codexIdle);
  expect(hook(pane, ['codex', 'UserPromptSubmit'], '{"session_id":"s1"}')).toEqual({ status: 0, stdout: '', stderr: '' });
  expect(t.option(pane, '@agent_state')).toBe('working');
  expect(t.option(pane, '@agent_source')).toBe('hook');
  expect(hook(pane, ['codex', 'notify', '{"type":"agent-turn-complete","turn-id":"7"}'])).toEqual({ status: 0, stdout: '', stderr: '' });
  expect(t.option(pane, '@agent_state')).toBe('idle');
  expect(t.option(pane, '@agent_attention')).toBe('1');
  expect(Number(t.option(pane, '@agent_turn_at'))).toBeGreaterThan(0);
});

it('tma event is silent and exits 0 whatever it is given', async () => {
  const pane = t.start();
  for (const args of [
    ['event', '--agent', 'nosuch', '--kind', 'Stop'],
    ['event', '--agent', 'claude', '--kind', 'Stop', '--payload', '/nonexistent'],
    ['event', '--bogus'],
    ['-L', 'no-such-server-here', 'event', '--agent', 'claude', '--kind', 'Stop'],
  ]) {
    const r = await tma(args, { env: { TMUX_PANE: pane }, input: 'not json' });
    expect(r).toEqual({ code: 0, stdout: '', stderr: '' });
  }
  expect(t.option(pane, '@agent_state')).toBe('');
});

it('a Notification only blocks on a permission payload (the matcher), and records nothing else', async () => {
  const pane = t.start();
  await t.standIn(pane, 'claude', SCREENS.claudeIdle);
  hook(pane, ['claude', 'Notification'], '{"notification_type":"idle_prompt"}');
  expect(t.option(pane, '@agent_state')).toBe('');
  hook(pane, ['claude', 'Notification'], '{"notification_type":"permission_prompt"}');
  expect(t.option(pane, '@agent_state')).toBe('blocked');
  expect(t.option(pane, '@agent_detail')).toBe('permission');
});

it('ls text, status formats and version', async () => {
  const pane = t.start();
  await t.standIn(pane, 'claude', SCREENS.claudeBlocked);
  const ls = await tma(['-L', t.name, 'ls']);
  const cols = ls.stdout.replace(/\n$/, '').split('\t');
  expect(cols).toHaveLength(12);
  expect(cols.slice(0, 4)).toEqual([pane, 'claude', 'blocked', 'permission']);
  expect(cols[5]).toBe('main:0.0');
  const plain = await tma(['-L', t.name, 'status', '--format', 'plain']);
  expect(plain.stdout).toBe('⚑1');
  const json = JSON.parse((await tma(['-L', t.name, 'status', '--format', 'json'])).stdout);
  expect(json.counts.blocked).toBe(1);
  expect((await tma(['-L', t.name, 'status', '--format', 'xml'])).code).toBe(2);
  expect((await tma(['-L', t.name, 'ls', '--state', 'spinning'])).code).toBe(2);
  expect((await tma(['ls', '--host', 'x'])).code).toBe(2);
  expect((await tma(['version'])).stdout).toMatch(/^tma \d+\.\d+\.\d+\n$/);
});

it('clear-attention unsets the arrival pane and, after select-pane, the pane left behind', async () => {
  const a = t.start();
  t.tmux('split-window', '-d', '-t', a);
  const b = t.tmux('list-panes', '-t', a, '-F', '#{pane_id}').trim().split('\n').find((p) => p !== a)!;
  for (const p of [a, b]) t.tmux('set-option', '-p', '-t', p, '@agent_attention', '1');
  // Move to b, then back to a: a is the arrival, b the pane just left.
  t.tmux('select-pane', '-t', b);
  t.tmux('select-pane', '-t', a);
  const r = await tma(['-L', t.name, 'clear-attention', a], { env: { TMA_HOOK_KIND: 'after-select-pane' } });
  expect(r).toEqual({ code: 0, stdout: '', stderr: '' });
  expect(t.option(a, '@agent_attention')).toBe('');
  expect(t.option(b, '@agent_attention')).toBe('');
  // A session switch clears only the arrival.
  for (const p of [a, b]) t.tmux('set-option', '-p', '-t', p, '@agent_attention', '1');
  await tma(['-L', t.name, 'clear-attention', a], { env: { TMA_HOOK_KIND: 'client-session-changed' } });
  expect(t.option(a, '@agent_attention')).toBe('');
  expect(t.option(b, '@agent_attention')).toBe('1');
});
