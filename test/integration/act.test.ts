// `tma act` against real tmux and stand-in agents that log every byte they receive.

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { ScratchTmux, tma, waitFor, type StandIn } from '../support/scratch-tmux.js';

let s: ScratchTmux;
let env: NodeJS.ProcessEnv;

beforeEach(() => {
  s = new ScratchTmux('act');
  writeFileSync(join(s.dir, 'config.toml'), '[fold]\nfreshness_secs = 0\n');
  mkdirSync(join(s.dir, 'state'));
  env = { TMA_CONFIG: join(s.dir, 'config.toml'), XDG_STATE_HOME: join(s.dir, 'state') };
});

afterEach(() => s.kill());

let lastStderr = '';
const act = async (...args: string[]) => {
  const r = await tma(['--socket-name', s.name, 'act', ...args], { env });
  lastStderr = r.stderr;
  return r;
};

async function claude(fixture: string): Promise<StandIn> {
  return s.standIn(s.start(), 'claude', fixture);
}

/** Anything a broker typed reaches the stand-in within milliseconds of send-keys returning. */
async function settledKeys(a: StandIn): Promise<string> {
  await new Promise((r) => setTimeout(r, 150));
  return a.keys();
}

const json = (stdout: string): Record<string, unknown> => {
  try {
    return JSON.parse(stdout) as Record<string, unknown>;
  } catch {
    throw new Error(`not JSON: ${JSON.stringify(stdout)}; stderr: ${lastStderr}`);
  }
};

describe('tma act approve', () => {
  test('on a blocked claude sends 1 exactly once, reports sent and releases the lock', async () => {
    const a = await claude('claude-permission-dialog.txt');
    const r = await act('approve', '--pane', a.pane, '--json');
    expect(json(r.stdout)).toEqual({ schema: 1, action: 'approve', pane: a.pane, outcome: 'sent', exit_code: 0, reason: null });
    expect(r.code).toBe(0);
    await waitFor(() => a.keys() !== '', 'keys at the stand-in');
    expect(await settledKeys(a)).toBe('1');
    expect(s.option(a.pane, '@agent_action')).toBe('');
  });

  test('on an idle claude is refused gated (exit 4) and sends nothing', async () => {
    const a = await claude('claude-idle.txt');
    const r = await act('approve', '--pane', a.pane, '--json');
    expect(json(r.stdout)).toMatchObject({ outcome: 'refused', reason: 'gated', exit_code: 4 });
    expect(r.code).toBe(4);
    expect(await settledKeys(a)).toBe('');
  });

  test('a held lock refuses with locked (exit 5) and sends nothing', async () => {
    const a = await claude('claude-permission-dialog.txt');
    const held = `${Date.now() + 60_000}:${'ab'.repeat(16)}:1:approve`;
    s.tmux('set-option', '-p', '-t', a.pane, '@agent_action', held);
    const r = await act('approve', '--pane', a.pane, '--json');
    expect(json(r.stdout)).toMatchObject({ outcome: 'refused', reason: 'locked', exit_code: 5 });
    expect(r.code).toBe(5);
    expect(await settledKeys(a)).toBe('');
    // Someone else's lock is never released by the loser.
    expect(s.option(a.pane, '@agent_action')).toBe(held);
  });

  test('an expired lock whose holder still runs refuses; one whose holder is gone is taken', async () => {
    const a = await claude('claude-permission-dialog.txt');
    const expired = Date.now() - 1000;
    s.tmux('set-option', '-p', '-t', a.pane, '@agent_action', `${expired}:${'cd'.repeat(16)}:${process.pid}:approve`);
    expect((await act('approve', '--pane', a.pane)).code).toBe(5);
    expect(await settledKeys(a)).toBe('');

    // A pid above the kernel's pid_max can belong to no process.
    s.tmux('set-option', '-p', '-t', a.pane, '@agent_action', `${expired}:${'cd'.repeat(16)}:4194304:approve`);
    const r = await act('approve', '--pane', a.pane, '--json');
    expect(json(r.stdout)).toMatchObject({ outcome: 'sent' });
    await waitFor(() => a.keys() === '1', 'the approval key');
  });

  test('--expect-episode-ms: another episode is refused episode-changed, the one seen fires', async () => {
    const a = await claude('claude-permission-dialog.txt');
    const ls = await tma(['--socket-name', s.name, 'ls', '--json'], { env });
    const episode = (json(ls.stdout).agents as { episode_ms: number }[])[0]!.episode_ms;
    expect(episode).toBeGreaterThan(0);

    for (const wrong of [episode - 1, episode + 1]) {
      const r = await act('approve', '--pane', a.pane, '--json', '--expect-episode-ms', String(wrong));
      expect(json(r.stdout)).toMatchObject({ outcome: 'refused', reason: 'episode-changed', exit_code: 4 });
    }
    expect(await settledKeys(a)).toBe('');
    const r = await act('approve', '--pane', a.pane, '--json', '--expect-episode-ms', String(episode));
    expect(json(r.stdout)).toMatchObject({ outcome: 'sent' });
    await waitFor(() => a.keys() === '1', 'the approval key');
  });

  test('--expect-permission-request: a pane without that request is refused request-gone', async () => {
    const a = await claude('claude-permission-dialog.txt');
    const r = await act('approve', '--pane', a.pane, '--json', '--expect-permission-request', 'per_123');
    expect(json(r.stdout)).toMatchObject({ outcome: 'refused', reason: 'request-gone', exit_code: 4 });
    expect(await settledKeys(a)).toBe('');
  });

  test('the same --slot twice fires once and replays the result with cached', async () => {
    const a = await claude('claude-permission-dialog.txt');
    const first = await act('approve', '--pane', a.pane, '--json', '--slot', 'op-1');
    expect(json(first.stdout)).toEqual({ schema: 1, action: 'approve', pane: a.pane, outcome: 'sent', exit_code: 0, reason: null, cached: false });
    await waitFor(() => a.keys() === '1', 'the approval key');
    const again = await act('approve', '--pane', a.pane, '--json', '--slot', 'op-1');
    expect(json(again.stdout)).toEqual({ ...json(first.stdout), cached: true });
    expect(again.code).toBe(0);
    expect(await settledKeys(a)).toBe('1');
    // A different slot is a different dispatch.
    const other = await act('approve', '--pane', a.pane, '--json', '--slot', 'op-2');
    expect(json(other.stdout)).toMatchObject({ outcome: 'sent', cached: false });
    await waitFor(() => a.keys() === '11', 'the second approval');
  });

  test('two concurrent calls with one slot fire exactly once', async () => {
    const a = await claude('claude-permission-dialog.txt');
    const both = await Promise.all([act('approve', '--pane', a.pane, '--json', '--slot', 'race'), act('approve', '--pane', a.pane, '--json', '--slot', 'race')]);
    const cached = both.map((r) => json(r.stdout).cached).sort();
    expect(cached).toEqual([false, true]);
    expect(await settledKeys(a)).toBe('1');
  });

  test('a gone pane is vanished (exit 3)', async () => {
    s.start();
    const r = await act('approve', '--pane', '%99', '--json');
    expect(json(r.stdout)).toMatchObject({ outcome: 'vanished', reason: 'pane-gone', exit_code: 3 });
    expect(r.code).toBe(3);
  });
});

describe('tma act with exec actions', () => {
  function userAction(name: string, body: string): void {
    const dir = join(s.dir, 'xdg', 'tma', 'actions');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `${name}.toml`), `min_engine_version = "0.4.0"\nname = "${name}"\nlabel = "${name}"\nkind = "exec"\n${body}`);
    env.XDG_CONFIG_HOME = join(s.dir, 'xdg');
  }

  test('a sync command gets the TMA_* context in its environment and its exit code is the result', async () => {
    const out = join(s.dir, 'env.out');
    userAction('record', `command = 'printf "%s|%s|%s|%s" "$TMA_PANE" "$TMA_AGENT" "$TMA_ARG" "$TMA_ARG_COUNT" > ${out}; exit 7'\n`);
    const a = await claude('claude-idle.txt');
    const r = await act('record', '--pane', a.pane, '--json', '--arg', 'x y', '--arg', 'z');
    expect(json(r.stdout)).toEqual({ schema: 1, action: 'record', pane: a.pane, outcome: 'exited', exit_code: 7, reason: null });
    expect(r.code).toBe(7);
    const { readFileSync } = await import('node:fs');
    expect(readFileSync(out, 'utf8')).toBe(`${a.pane}|claude|x y|2`);
  });

  test('a sync command past timeout_ms is killed and reports timeout (124)', async () => {
    userAction('slow', `timeout_ms = 300\ncommand = 'sleep 5'\n`);
    const a = await claude('claude-idle.txt');
    const t0 = Date.now();
    const r = await act('slow', '--pane', a.pane, '--json');
    expect(json(r.stdout)).toMatchObject({ outcome: 'timeout', exit_code: 124 });
    expect(r.code).toBe(124);
    expect(Date.now() - t0).toBeLessThan(4000);
    expect(s.option(a.pane, '@agent_action')).toBe('');
  });

  test('a detached command is spawned under a supervisor that holds the lock until it ends', async () => {
    const gate = join(s.dir, 'go');
    userAction('bg', `detach = true\ncommand = 'while [ ! -e ${gate} ]; do sleep 0.05; done'\n`);
    const a = await claude('claude-idle.txt');
    const r = await act('bg', '--pane', a.pane, '--json');
    expect(json(r.stdout)).toMatchObject({ outcome: 'spawned', exit_code: 0 });
    await waitFor(() => /:\d+:bg$/.test(s.option(a.pane, '@agent_action')), 'the supervisor to hold the lock');
    expect((await act('bg', '--pane', a.pane)).code).toBe(5);
    writeFileSync(gate, '');
    await waitFor(() => s.option(a.pane, '@agent_action') === '', 'the supervisor to release the lock');
  });
});

describe('the rendered lock writes on tmux 3.3', () => {
  test('acquire takes an empty or expired lock, never a live one; release needs the nonce', async () => {
    const { renderLockAcquire, renderLockRelease } = await import('../../collector/core/stamp-render.js');
    const pane = s.start();
    const held = (n: string) => `5000:${n.repeat(32)}:1:approve`;
    const run = (argv: string[]) => s.tmux(...argv);
    run(renderLockAcquire(pane, held('a'), 1));
    expect(s.option(pane, '@agent_action')).toBe(held('a'));
    for (const now of [4999, 5000]) {
      run(renderLockAcquire(pane, held('b'), now));
      expect(s.option(pane, '@agent_action')).toBe(held('a'));
    }
    run(renderLockAcquire(pane, held('c'), 5001));
    expect(s.option(pane, '@agent_action')).toBe(held('c'));
    run(renderLockRelease(pane, 'a'.repeat(32)));
    expect(s.option(pane, '@agent_action')).toBe(held('c'));
    run(renderLockRelease(pane, 'c'.repeat(32)));
    expect(s.option(pane, '@agent_action')).toBe('');
    run(renderLockAcquire(pane, held('d'), 1));
    expect(s.option(pane, '@agent_action')).toBe(held('d'));
  });
});

describe('tma act usage and listing', () => {
  test('usage errors exit 2; --list shows the bundled set in order', async () => {
    s.start();
    for (const args of [[], ['nope', '--pane', '%0'], ['approve', '--pane', '%0', '--arg', 'x'], ['approve', '--pane', '%0', '--agent', 'claude'],
      ['--list', 'approve'], ['--list', '--all'], ['approve'], ['approve', '--all', '--slot', 'k'], ['approve', '--pane', '%0', '--expect-episode-ms', 'x']]) {
      expect((await act(...args)).code, args.join(' ')).toBe(2);
    }
    const list = await act('--list');
    expect(list.code).toBe(0);
    expect(list.stdout.split('\n').filter(Boolean).map((l) => l.split(' ')[0])).toEqual(['approve', 'deny', 'interrupt', 'compact']);
    expect(list.stdout).toContain('approve keys claude,codex,opencode\n');
  });
});
