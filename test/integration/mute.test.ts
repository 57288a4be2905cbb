// `tma mute` against a real tmux server.

import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { ScratchTmux, tma } from '../support/scratch-tmux.js';

let s: ScratchTmux;
let env: NodeJS.ProcessEnv;

beforeEach(() => {
  s = new ScratchTmux('mute');
  writeFileSync(join(s.dir, 'config.toml'), '[fold]\nfreshness_secs = 0\n');
  env = { TMA_CONFIG: join(s.dir, 'config.toml') };
});
afterEach(() => s.kill());

const mute = (...args: string[]) => tma(['--socket-name', s.name, 'mute', ...args], { env });

test('--for writes now + window, no --for the sentinel, --clear unsets', async () => {
  const pane = s.start();
  const t0 = Date.now();
  const r = await mute('--pane', pane, '--for', '30m');
  expect(r).toMatchObject({ code: 0, stdout: `tma: muted for 30m: ${pane}\n` });
  const until = Number(s.option(pane, '@agent_mute_until'));
  expect(until).toBeGreaterThanOrEqual(t0 + 1_800_000);
  expect(until).toBeLessThanOrEqual(Date.now() + 1_800_000);

  expect(await mute('--pane', pane)).toMatchObject({ code: 0, stdout: `tma: muted indefinitely: ${pane}\n` });
  expect(s.option(pane, '@agent_mute_until')).toBe('99999999999999');

  expect(await mute('--pane', pane, '--clear')).toMatchObject({ code: 0, stdout: `tma: unmuted: ${pane}\n` });
  expect(s.option(pane, '@agent_mute_until')).toBe('');
});

test('a selector mutes every matching agent pane and only those; none matching is exit 3', async () => {
  const shell = s.start();
  const agent = await s.standIn(s.newPane(), 'claude', 'claude-idle.txt');
  expect(await mute('--agent', 'claude', '--for', '90')).toMatchObject({ code: 0, stdout: `tma: muted for 90s: ${agent.pane}\n` });
  expect(s.option(agent.pane, '@agent_mute_until')).not.toBe('');
  expect(s.option(shell, '@agent_mute_until')).toBe('');
  expect((await mute('--agent', 'codex')).code).toBe(3);
});

test('usage errors exit 2 and write nothing', async () => {
  const pane = s.start();
  for (const args of [
    ['--for', '0'],
    ['--for', '5x'],
    ['--for', '1m', '--clear'],
    ['--agent', 'claude'],
  ]) {
    expect((await mute('--pane', pane, ...args)).code).toBe(2);
  }
  // Neither --pane nor a selector, outside tmux.
  expect((await mute()).code).toBe(2);
  expect(s.option(pane, '@agent_mute_until')).toBe('');
});

test("--pane is not checked for an agent, and a pane tmux cannot find is tmux's error (1), named once", async () => {
  const shell = s.start();
  expect(await mute('--pane', shell)).toMatchObject({ code: 0, stdout: `tma: muted indefinitely: ${shell}\n` });
  const r = await mute('--pane', '%99');
  expect(r.code).toBe(1);
  expect(r.stdout).toBe('');
  expect(r.stderr).toMatch(/^tma: tmux: [^\n]*%99\n$/);
  expect(r.stderr).not.toContain('tmux: tmux:');
});
