// The contract items users script against, through the built CLI on a real server: an empty
// agent-manifest set, [status] styles, mute's echo, act's refusals and their words.

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { ScratchTmux, tma, waitFor } from '../support/scratch-tmux.js';
import { SCREENS } from '../support/screens.js';

let t: ScratchTmux;
beforeEach(() => {
  t = new ScratchTmux('contract');
});
afterEach(() => t.kill());

const run = (args: string[], env: NodeJS.ProcessEnv = {}) => tma(['-L', t.name, ...args], { env });

it('an empty manifest set is a set: ls prints nothing and exits 0, act on a stamped pane still fires', async () => {
  const blocked = await t.standIn(t.start(), 'claude', SCREENS.claudeBlocked);
  const empty = join(t.dir, 'no-agents');
  mkdirSync(empty);
  // Everything disabled by config, or an empty --manifest-dir: no agent known, no error.
  writeFileSync(
    join(t.dir, 'none.toml'),
    ['claude', 'codex', 'opencode', 'gemini', 'cursor', 'pi'].map((n) => `[[agent]]\nname = "${n}"\nenabled = false\n`).join(''),
  );
  expect(await run(['--config', join(t.dir, 'none.toml'), 'ls'])).toEqual({ code: 0, stdout: '', stderr: '' });
  expect(await run(['--manifest-dir', empty, 'ls', '--json'])).toEqual({ code: 0, stdout: '{"schema":1,"agents":[]}\n', stderr: '' });
  // Only broken files: each is named on stderr, and the set is empty, not an error.
  const broken = join(t.dir, 'broken-agents');
  mkdirSync(broken);
  writeFileSync(join(broken, 'claude.toml'), 'min_engine_version = "0.4.0"\n[identity\n');
  const r0 = await run(['--manifest-dir', broken, 'ls']);
  expect(r0).toMatchObject({ code: 0, stdout: '' });
  expect(r0.stderr).toContain('claude.toml');

  // A hook stamps the prompt (with the bundled set); act under the empty set still answers it.
  await tma(['-L', t.name, 'event', '--agent', 'claude', '--kind', 'Notification', '--payload', '-'], {
    env: { TMUX_PANE: blocked.pane },
    input: '{"notification_type":"permission_prompt"}',
  });
  expect(t.option(blocked.pane, '@agent_state')).toBe('blocked');
  const r = await run(['--manifest-dir', empty, 'act', 'approve', '--pane', blocked.pane, '--json']);
  expect(JSON.parse(r.stdout)).toMatchObject({ outcome: 'sent' });
  expect(r.code).toBe(0);
  await waitFor(() => blocked.keys() === '1', 'the approve key in the stand-in');
}, 60_000);

it('[status] styles change tmux and plain output; an unknown [status] key is an error', async () => {
  await t.standIn(t.start(), 'claude', SCREENS.claudeBlocked);
  const cfg = join(t.dir, 'status.toml');
  writeFileSync(cfg, '[status]\nblocked = { glyph = "B", color = "colour196" }\n');
  expect(await run(['--config', cfg, 'status'])).toMatchObject({ code: 0, stdout: '#[range=user|tma:blocked]#[fg=colour196]B1#[norange]#[default]' });
  expect(await run(['--config', cfg, 'status', '--format', 'plain'])).toMatchObject({ code: 0, stdout: 'B1\n' });
  expect(await run(['status'])).toMatchObject({ code: 0, stdout: '#[range=user|tma:blocked]#[fg=colour88]⚑1#[norange]#[default]' });
  writeFileSync(cfg, '[status]\nblocked = { glyph = "B" }\nbusy = { glyph = "W" }\n');
  const bad = await run(['--config', cfg, 'status']);
  expect(bad.code).toBe(1);
  expect(bad.stderr).toContain('status.busy: unknown key');
});

it('mute echoes the coarsest exact unit; act names what it refuses', async () => {
  const pane = t.start();
  expect(await run(['mute', '--pane', pane, '--for', '1800'])).toMatchObject({ code: 0, stdout: `tma: muted for 30m: ${pane}\n` });
  expect(await run(['mute', '--pane', pane, '--for', '7200'])).toMatchObject({ code: 0, stdout: `tma: muted for 2h: ${pane}\n` });
  expect(await run(['mute', '--pane', pane, '--for', '1440m'])).toMatchObject({ code: 0, stdout: `tma: muted for 1d: ${pane}\n` });

  const none = await run(['act', 'approve', '--all']);
  expect(none.code).toBe(2);
  expect(none.stderr).toContain('nothing to act on');
  const arg = await run(['act', 'approve', '--pane', pane, '--arg', 'x']);
  expect(arg.code).toBe(2);
  expect(arg.stderr).toContain('keys action');
});
