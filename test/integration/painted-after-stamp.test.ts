// One-shot readers (ls, status, act) on a real tmux with no collector, at the default 3 s
// freshness: a stamp younger than that must not stand once the pane painted after it. The two
// ways it hid the truth: a hook's working claim with the permission dialog painted after it, and
// an answered prompt while the agent visibly works.

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ScratchTmux, tma, waitFor, type StandIn } from '../support/scratch-tmux.js';
import { SCREENS } from '../support/screens.js';

let t: ScratchTmux;
let env: NodeJS.ProcessEnv;

beforeEach(() => {
  t = new ScratchTmux('paint');
  // Default fold settings (freshness 3 s): the window the bug lived in.
  writeFileSync(join(t.dir, 'config.toml'), '');
  mkdirSync(join(t.dir, 'state'));
  env = { TMA_CONFIG: join(t.dir, 'config.toml'), XDG_STATE_HOME: join(t.dir, 'state') };
});
afterEach(() => t.kill());

interface Row {
  pane: string;
  state: string;
  detail: string | null;
  prompt_id?: string | null;
}

/**
 * Cycles in one wall-clock second after another are a stampede (they only read stamps); a
 * reader here starts in the next second, as a status line polling at 1 Hz would.
 */
async function nextSecond(): Promise<void> {
  const wait = 1000 - (Date.now() % 1000);
  await new Promise((r) => setTimeout(r, wait + 5));
}

async function ls(pane: string): Promise<Row | undefined> {
  const r = await tma(['-L', t.name, 'ls', '--json'], { env });
  expect(r.stderr).toBe('');
  return (JSON.parse(r.stdout) as { agents: Row[] }).agents.find((a) => a.pane === pane);
}

async function status(): Promise<string> {
  const r = await tma(['-L', t.name, 'status', '--format', 'json'], { env });
  expect(r.stderr).toBe('');
  return r.stdout;
}

function act(pane: string) {
  return tma(['--socket-name', t.name, 'act', 'approve', '--pane', pane, '--json'], { env });
}

function event(pane: string, kind: string, input = '{"session_id":"s-1","tool_name":"Bash","tool_input":{"command":"touch made"}}') {
  return tma(['--socket-name', t.name, 'event', '--agent', 'claude', '--kind', kind, '--payload', '-'], {
    env: { ...env, TMUX_PANE: pane },
    input,
  });
}

/** The stamp's age when read, so a pass proves it was inside the freshness window. */
function stampAge(pane: string): number {
  return Date.now() - Number(t.option(pane, '@agent_stamped_at'));
}

describe('a hook claim of working, then the dialog painted after it', () => {
  async function hookThenDialog(): Promise<StandIn> {
    const a = await t.standIn(t.start(), 'claude', SCREENS.claudeIdle);
    expect((await event(a.pane, 'PreToolUse')).code).toBe(0);
    expect(t.option(a.pane, '@agent_source')).toBe('hook');
    expect(t.option(a.pane, '@agent_state')).toBe('working');
    await a.paint(SCREENS.claudeBlocked);
    return a;
  }

  it('ls says blocked while the hook stamp is still young', async () => {
    const a = await hookThenDialog();
    await nextSecond();
    const row = await ls(a.pane);
    expect(row).toMatchObject({ state: 'blocked', detail: 'permission' });
    expect(stampAge(a.pane)).toBeLessThan(3000);
  });

  it('approve is not refused gated: the prompt on screen is answered, once', async () => {
    const a = await hookThenDialog();
    const r = await act(a.pane);
    expect(JSON.parse(r.stdout)).toMatchObject({ outcome: 'sent', reason: null });
    await waitFor(() => a.keys() !== '', 'keys at the stand-in');
    await new Promise((res) => setTimeout(res, 150));
    expect(a.keys()).toBe('1');
  });
});

describe('an answered prompt while the agent works', () => {
  it('ls and status stop saying blocked once the agent has repainted', async () => {
    const pane = t.start();
    // The agent takes the key and shows its work at once, as Claude does.
    const a = await t.standIn(pane, 'claude', SCREENS.claudeBlocked, { afterKey: { fixture: SCREENS.claudeWorking, delayMs: 0 } });
    await nextSecond();
    expect(await ls(pane)).toMatchObject({ state: 'blocked' });
    await nextSecond();
    const r = await act(pane);
    expect(JSON.parse(r.stdout)).toMatchObject({ outcome: 'sent' });
    await waitFor(() => t.tmux('display-message', '-p', '-t', pane, '#{pane_title}').startsWith('⠂'), 'working painted');
    await nextSecond();
    const row = await ls(pane);
    expect(stampAge(pane)).toBeLessThan(3000);
    expect(row).toMatchObject({ state: 'working' });
    expect(row?.prompt_id ?? null).toBeNull();
    expect(JSON.parse(await status())).toMatchObject({ counts: { blocked: 0, working: 1 } });
    expect(a.keys()).toBe('1');
  });
});

describe("an answered prompt a hook claimed, the agent's next hook event not there yet", () => {
  it('ls and status say working once the dialog is gone from the screen', async () => {
    const pane = t.start();
    const a = await t.standIn(pane, 'claude', SCREENS.claudeIdle, { afterKey: { fixture: SCREENS.claudeWorking, delayMs: 0 } });
    // The agent's own blocked claim, then its dialog (a hook process per event: the one after the
    // answer may come seconds later under load; here it never comes).
    const notify = '{"session_id":"s-1","notification_type":"permission_prompt","message":"Claude needs your permission to use Bash"}';
    expect((await event(pane, 'Notification', notify)).code).toBe(0);
    expect(t.option(pane, '@agent_state')).toBe('blocked');
    await a.paint(SCREENS.claudeBlocked);
    await nextSecond();
    expect(await ls(pane)).toMatchObject({ state: 'blocked' });
    const r = await act(pane);
    expect(JSON.parse(r.stdout)).toMatchObject({ outcome: 'sent' });
    await waitFor(() => t.tmux('display-message', '-p', '-t', pane, '#{pane_title}').startsWith('⠂'), 'working painted');
    await nextSecond();
    expect(await ls(pane)).toMatchObject({ state: 'working' });
    expect(JSON.parse(await status())).toMatchObject({ counts: { blocked: 0, working: 1 } });
    expect(a.keys()).toBe('1');
  });

  it('a dialog still showing after the answer keeps the claim', async () => {
    const pane = t.start();
    // The key did not take: the agent shows the same dialog.
    const a = await t.standIn(pane, 'claude', SCREENS.claudeIdle);
    const notify = '{"session_id":"s-1","notification_type":"permission_prompt","message":"Claude needs your permission to use Bash"}';
    expect((await event(pane, 'Notification', notify)).code).toBe(0);
    await a.paint(SCREENS.claudeBlocked);
    await nextSecond();
    expect(JSON.parse((await act(pane)).stdout)).toMatchObject({ outcome: 'sent' });
    await nextSecond();
    expect(await ls(pane)).toMatchObject({ state: 'blocked' });
  });
});
