// The hook lane on a real tmux server: a stand-in Claude paints its permission dialog while the
// real hook command (`bin/tma-hook claude PermissionRequest`) waits on a real `tma collector`.
// An approve answers through the hook (its stdout is the decision, no key reaches the pane);
// many approves at once answer once; an approve racing the hook's timeout lands in one lane only
// (the decision is one step on the collector); with no collector the hook prints nothing at once.

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { canonicalSocketPath, wakeDir, wakeSocketPath } from '../../collector/fleet/wake.js';
import { REPO, ScratchTmux, tma, waitFor, type CliResult, type StandIn } from '../support/scratch-tmux.js';
import { SCREENS } from '../support/screens.js';
import { FakeHub } from './fake-hub.js';

const HOOK = join(REPO, 'bin/tma-hook');
const PAYLOAD = JSON.stringify({
  session_id: 'lane-1',
  hook_event_name: 'PermissionRequest',
  tool_name: 'Bash',
  tool_input: { command: 'rm -rf build/' },
  permission_suggestions: [],
});
const ALLOW = '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}\n';

let s: ScratchTmux;
let env: NodeJS.ProcessEnv;
let hub: FakeHub | null = null;
let collector: ChildProcess | null = null;
const hooks: ChildProcess[] = [];

beforeEach(() => {
  s = new ScratchTmux('hooklane');
  mkdirSync(join(s.dir, 'state'));
  env = { XDG_STATE_HOME: join(s.dir, 'state'), XDG_RUNTIME_DIR: join(s.dir, 'run') };
});

afterEach(async () => {
  for (const h of hooks.splice(0)) h.kill('SIGKILL');
  collector?.kill('SIGKILL');
  collector = null;
  await hub?.close();
  hub = null;
  s.kill();
});

const act = (...args: string[]) => tma(['--socket-name', s.name, 'act', ...args], { env, timeoutMs: 60_000 });
const json = (r: CliResult): Record<string, unknown> => {
  try {
    return JSON.parse(r.stdout) as Record<string, unknown>;
  } catch {
    throw new Error(`not JSON: ${JSON.stringify(r.stdout)}; exit ${r.code}; stderr: ${r.stderr}`);
  }
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function startCollector(): Promise<void> {
  writeFileSync(join(s.dir, 'token'), 'tok\n');
  hub = await FakeHub.start({ token: 'tok' });
  const base = { ...process.env, ...env, TMUX: '', TMUX_PANE: '', XDG_CONFIG_HOME: join(s.dir, 'cfg') };
  collector = spawn(
    process.execPath,
    [
      join(REPO, 'bin/tma.js'),
      'collector',
      '--hub',
      `ws://127.0.0.1:${hub.port}`,
      '--token-file',
      join(s.dir, 'token'),
      '--socket-name',
      s.name,
      '--interval',
      '30',
    ],
    { env: base, stdio: 'ignore' },
  );
  const h = hub;
  await waitFor(() => h.conns[0]?.frames.some((f) => f.frame.type === 'snapshot') === true, 'first snapshot', 20_000);
  await waitFor(() => existsSync(wakeSocketPath(canonicalSocketPath(s.socketPath()), wakeDir(env))), 'the wake socket', 10_000);
}

interface HookRun {
  done: Promise<{ code: number | null; stdout: string; ms: number }>;
}

/** The real hook command, as the agent runs it: payload on stdin, decision (or nothing) on stdout. */
function runHook(pane: string, waitSecs: number): HookRun {
  const t0 = Date.now();
  const c = spawn(HOOK, ['claude', 'PermissionRequest'], {
    env: {
      ...process.env,
      ...env,
      TMUX: '',
      TMUX_PANE: pane,
      TMA_HOOK_SOCKET: s.name,
      TMA_BIN: join(REPO, 'bin/tma.js'),
      TMA_HOOK_WAIT_SECS: String(waitSecs),
      XDG_CONFIG_HOME: join(s.dir, 'cfg'),
    },
  });
  hooks.push(c);
  let stdout = '';
  c.stdout.on('data', (d) => (stdout += d));
  c.stdin.end(PAYLOAD);
  return { done: new Promise((res) => c.on('close', (code) => res({ code, stdout, ms: Date.now() - t0 }))) };
}

async function waiting(a: StandIn): Promise<string> {
  await waitFor(() => (s.option(a.pane, '@tma_hook_request') ?? '') !== '', 'the hook request on the pane', 30_000);
  return s.option(a.pane, '@tma_hook_request');
}

describe('the hook lane', { timeout: 180_000 }, () => {
  test('the pane reads blocked with the summary; approve answers through the hook, no key; again is refused', async () => {
    const a = await s.standIn(s.start(), 'claude', SCREENS.claudeBlocked);
    await startCollector();
    const hook = runHook(a.pane, 60);
    const id = await waiting(a);
    expect(id).toMatch(/^hook-[0-9a-f]{16}$/);
    expect(s.option(a.pane, '@agent_state')).toBe('blocked');
    expect(s.option(a.pane, '@agent_detail')).toBe('permission');
    expect(s.option(a.pane, '@agent_pending_summary')).toBe('Bash: rm -rf build/');
    expect(s.option(a.pane, '@agent_permission_request')).toBe(id);
    const listed = json(await act('--list', '--pane', a.pane, '--json'));
    expect(JSON.stringify(listed)).toContain('"lane":"hook"');
    const r = json(await act('approve', '--pane', a.pane, '--json'));
    expect(r).toMatchObject({ outcome: 'replied', exit_code: 0 });
    const end = await hook.done;
    expect(end).toMatchObject({ code: 0, stdout: ALLOW });
    await sleep(300);
    expect(a.keys()).toBe('');
    await waitFor(() => (s.option(a.pane, '@tma_hook_request') ?? '') === '', 'the lane cleared', 10_000);
    const again = json(await act('approve', '--pane', a.pane, '--json'));
    expect(again).toMatchObject({ outcome: 'refused', reason: 'answered' });
    expect(a.keys()).toBe('');
  });

  test('eight approves at once: one answer through the hook, no key', async () => {
    const a = await s.standIn(s.start(), 'claude', SCREENS.claudeBlocked);
    await startCollector();
    const hook = runHook(a.pane, 120);
    await waiting(a);
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => act('approve', '--pane', a.pane, '--json', '--slot', `many-${i}`).then(json)));
    expect(results.filter((r) => r.outcome === 'replied')).toHaveLength(1);
    expect(results.filter((r) => r.outcome === 'sent')).toHaveLength(0);
    for (const r of results.filter((x) => x.outcome !== 'replied')) {
      expect(r.outcome).toBe('refused');
      expect(['answered', 'locked']).toContain(r.reason);
    }
    expect(await hook.done).toMatchObject({ code: 0, stdout: ALLOW });
    await sleep(300);
    expect(a.keys()).toBe('');
  });

  test('approves racing the hook timeout: one answer, in one lane, never both', async () => {
    const a = await s.standIn(s.start(), 'claude', SCREENS.claudeBlocked);
    await startCollector();
    const lanes: string[] = [];
    for (let round = 0; round < 3; round++) {
      const keysBefore = a.keys().length;
      const hook = runHook(a.pane, 3);
      await waiting(a);
      const t0 = Date.now();
      // Approves spread across the hook's 3 s deadline (a CLI start itself takes about a second
      // here), each its own process and slot: some arrive while the hook waits, some after.
      const results = await Promise.all(
        [0, 600, 1200, 1800, 2400].map(async (ms, i) => {
          await sleep(ms + round * 150 - (Date.now() - t0));
          return json(await act('approve', '--pane', a.pane, '--json', '--slot', `race-${round}-${i}`));
        }),
      );
      const end = await hook.done;
      await sleep(300);
      const keys = a.keys().slice(keysBefore);
      const replied = results.filter((r) => r.outcome === 'replied').length;
      const sent = results.filter((r) => r.outcome === 'sent').length;
      // At most one answer, and each lane's report matches what reached the agent.
      expect(replied + sent).toBeLessThanOrEqual(1);
      expect(end.stdout === ALLOW).toBe(replied === 1);
      expect(end.stdout === '' || end.stdout === ALLOW).toBe(true);
      expect(keys).toBe(sent === 1 ? '1' : '');
      for (const r of results.filter((x) => x.outcome !== 'replied' && x.outcome !== 'sent')) {
        expect(r.outcome).toBe('refused');
        expect(['answered', 'locked']).toContain(r.reason);
      }
      lanes.push(replied === 1 ? 'hook' : sent === 1 ? 'keys' : 'none');
    }
    process.stdout.write(`hook-timeout race, lane per round: ${lanes.join(', ')}\n`);
  });

  test('with no collector the hook prints nothing at once and the pane is still stamped blocked', async () => {
    const a = await s.standIn(s.start(), 'claude', SCREENS.claudeBlocked);
    const end = await runHook(a.pane, 60).done;
    expect(end).toMatchObject({ code: 0, stdout: '' });
    expect(end.ms).toBeLessThan(20_000);
    expect(s.option(a.pane, '@agent_state')).toBe('blocked');
    expect(s.option(a.pane, '@agent_pending_summary')).toBe('Bash: rm -rf build/');
    const r = json(await act('approve', '--pane', a.pane, '--json'));
    expect(r).toMatchObject({ outcome: 'sent' });
    await sleep(300);
    expect(a.keys()).toBe('1');
  });
});
