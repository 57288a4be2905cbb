// Acts decide on what the broker itself saw, not on pane options another process can write: a
// rewritten `@tma_prompt_id` does not let a forged --expect-prompt through, an erased or rewritten
// `@tma_answered` does not allow a second answer, and a mark dated in the future does not lock the
// pane. Real tmux, a stand-in agent that logs every key, the real CLI.

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { ScratchTmux, tma, type CliResult, type StandIn } from '../support/scratch-tmux.js';
import { SCREENS } from '../support/screens.js';

let s: ScratchTmux;
let env: NodeJS.ProcessEnv;

beforeEach(() => {
  s = new ScratchTmux('w2');
  mkdirSync(join(s.dir, 'state'));
  env = { XDG_STATE_HOME: join(s.dir, 'state') };
});
afterEach(() => s.kill());

const act = (...args: string[]) => tma(['--socket-name', s.name, 'act', ...args], { env, timeoutMs: 60_000 });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const json = (r: CliResult): Record<string, unknown> => {
  try {
    return JSON.parse(r.stdout) as Record<string, unknown>;
  } catch {
    throw new Error(`not JSON: ${JSON.stringify(r.stdout)}; exit ${r.code}; stderr: ${r.stderr}`);
  }
};
const option = (pane: string, key: string) => s.tmux('show-options', '-pqv', '-t', pane, key).trim();

async function blockedRow(a: StandIn): Promise<{ prompt_id: string }> {
  const r = await tma(['--socket-name', s.name, 'ls', '--json'], { env, timeoutMs: 60_000 });
  const row = (JSON.parse(r.stdout) as { agents: { pane: string; state: string; prompt_id: string }[] }).agents.find((x) => x.pane === a.pane)!;
  expect(row).toMatchObject({ state: 'blocked' });
  expect(row.prompt_id).toMatch(/^[0-9a-f]{16}$/);
  return row;
}

describe('a second writer on the pane options', { timeout: 120_000 }, () => {
  test('a rewritten @tma_prompt_id does not let a forged --expect-prompt send a key', async () => {
    const a = await s.standIn(s.start(), 'claude', SCREENS.claudeBlocked);
    const real = (await blockedRow(a)).prompt_id;
    const forged = real === 'deadbeefdeadbeef' ? 'feedfacefeedface' : 'deadbeefdeadbeef';
    const since = option(a.pane, '@tma_prompt_id').split(':')[0]!;
    s.tmux('set-option', '-p', '-t', a.pane, '@tma_prompt_id', `${since}:${forged}`);
    const r = await act('approve', '--pane', a.pane, '--json', '--expect-prompt', forged);
    expect(json(r)).toMatchObject({ outcome: 'refused', reason: 'prompt-changed' });
    await sleep(300);
    expect(a.keys()).toBe('');
    // The prompt the broker sees is still answerable by the id of what is on the screen.
    s.tmux('set-option', '-p', '-t', a.pane, '@tma_prompt_id', `${since}:${forged}`);
    expect(json(await act('approve', '--pane', a.pane, '--json', '--expect-prompt', real))).toMatchObject({ outcome: 'sent' });
    await sleep(300);
    expect(a.keys()).toBe('1');
  });

  test('an erased or rewritten @tma_answered does not allow a second answer', async () => {
    const a = await s.standIn(s.start(), 'claude', SCREENS.claudeBlocked);
    const real = (await blockedRow(a)).prompt_id;
    expect(json(await act('approve', '--pane', a.pane, '--json', '--expect-prompt', real))).toMatchObject({ outcome: 'sent' });
    await sleep(300);
    expect(a.keys()).toBe('1');
    expect(option(a.pane, '@tma_answered')).toMatch(new RegExp(`^${real}:`));
    // The prompt is still painted (the stand-in does not repaint): a second approve must not land.
    s.tmux('set-option', '-p', '-u', '-t', a.pane, '@tma_answered');
    expect(json(await act('approve', '--pane', a.pane, '--json'))).toMatchObject({ outcome: 'refused', reason: 'answered' });
    s.tmux('set-option', '-p', '-t', a.pane, '@tma_answered', `0123456789abcdef:${Date.now()}`);
    expect(json(await act('approve', '--pane', a.pane, '--json', '--expect-prompt', real))).toMatchObject({ outcome: 'refused', reason: 'answered' });
    await sleep(300);
    expect(a.keys()).toBe('1');
  });

  test('an answered mark from the future does not lock the pane, and is reported', async () => {
    const a = await s.standIn(s.start(), 'claude', SCREENS.claudeBlocked);
    await blockedRow(a);
    s.tmux('set-option', '-p', '-t', a.pane, '@tma_answered', `-:${Date.now() + 3_600_000}`);
    const r = await act('approve', '--pane', a.pane, '--json');
    expect(json(r)).toMatchObject({ outcome: 'sent' });
    expect(r.stderr).toMatch(/ignoring @tma_answered on %\d+: dated \d+ ms in the future/);
    await sleep(300);
    expect(a.keys()).toBe('1');
    // The broker's own mark then holds: the same prompt is not answered twice.
    expect(json(await act('approve', '--pane', a.pane, '--json'))).toMatchObject({ outcome: 'refused', reason: 'answered' });
  });
});
