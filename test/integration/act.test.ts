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

  test('on a blocked gemini sends 1 ("1. Allow once") exactly once; deny sends Escape', async () => {
    const a = await s.standIn(s.start(), 'node', 'gemini-approval-dialog.txt');
    const r = await act('approve', '--pane', a.pane, '--json');
    expect(json(r.stdout)).toEqual({ schema: 1, action: 'approve', pane: a.pane, outcome: 'sent', exit_code: 0, reason: null });
    await waitFor(() => a.keys() !== '', 'keys at the stand-in');
    expect(await settledKeys(a)).toBe('1');
    // The same prompt again: answered already, nothing more is typed.
    expect(json((await act('approve', '--pane', a.pane, '--json')).stdout)).toMatchObject({ outcome: 'refused', reason: 'answered' });
    const b = await s.standIn(s.newPane(), 'node', 'gemini-approval-dialog.txt');
    expect(json((await act('deny', '--pane', b.pane, '--json')).stdout)).toMatchObject({ outcome: 'sent' });
    await waitFor(() => b.keys() !== '', 'keys at the second stand-in');
    expect(await settledKeys(b)).toBe('\x1b');
    expect(await settledKeys(a)).toBe('1');
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
    // A different slot is a different dispatch, but the prompt it would answer was answered.
    const other = await act('approve', '--pane', a.pane, '--json', '--slot', 'op-2');
    expect(json(other.stdout)).toMatchObject({ outcome: 'refused', reason: 'answered', exit_code: 4, cached: false });
    expect(other.code).toBe(4);
    expect(await settledKeys(a)).toBe('1');
    // Only `--again`, a person saying the key was lost, answers it a second time.
    const again2 = await act('approve', '--pane', a.pane, '--json', '--slot', 'op-3', '--again');
    expect(json(again2.stdout)).toMatchObject({ outcome: 'sent', cached: false });
    await waitFor(() => a.keys() === '11', 'the second approval');
  });

  test('two concurrent calls with one slot fire exactly once', async () => {
    const a = await claude('claude-permission-dialog.txt');
    const both = await Promise.all([
      act('approve', '--pane', a.pane, '--json', '--slot', 'race'),
      act('approve', '--pane', a.pane, '--json', '--slot', 'race'),
    ]);
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
    for (const args of [
      [],
      ['nope', '--pane', '%0'],
      ['approve', '--pane', '%0', '--arg', 'x'],
      ['approve', '--pane', '%0', '--agent', 'claude'],
      ['--list', 'approve'],
      ['--list', '--all'],
      ['approve'],
      ['approve', '--all', '--slot', 'k'],
      ['approve', '--pane', '%0', '--expect-episode-ms', 'x'],
    ]) {
      expect((await act(...args)).code, args.join(' ')).toBe(2);
    }
    const list = await act('--list');
    expect(list.code).toBe(0);
    expect(
      list.stdout
        .split('\n')
        .filter(Boolean)
        .map((l) => l.split(' ')[0]),
    ).toEqual(['approve', 'deny', 'interrupt', 'compact']);
    expect(list.stdout).toContain('approve keys claude,codex,gemini,opencode\n');
  });
});

describe('tma act documents, as the verb writes them', () => {
  const keys = (o: unknown) => Object.keys(o as object);

  test('a single result has its keys in contract order', async () => {
    const a = await claude('claude-idle.txt');
    const r = await act('approve', '--pane', a.pane, '--json');
    expect(keys(json(r.stdout))).toEqual(['schema', 'action', 'pane', 'outcome', 'exit_code', 'reason']);
    const slot = await act('approve', '--pane', a.pane, '--json', '--slot', 'k1');
    expect(keys(json(slot.stdout))).toEqual(['schema', 'action', 'pane', 'outcome', 'exit_code', 'reason', 'cached']);
  });

  test('--all: the results envelope in fire order, elements without schema, exit of the worst', async () => {
    const a = await claude('claude-permission-dialog.txt');
    const b = await s.standIn(s.newPane(), 'claude', 'claude-idle.txt');
    const r = await act('approve', '--agent', 'claude', '--all', '--json');
    const doc = json(r.stdout) as { results: Record<string, unknown>[] };
    expect(keys(doc)).toEqual(['schema', 'results']);
    expect(doc.results.map(keys)).toEqual([
      ['action', 'pane', 'outcome', 'exit_code', 'reason'],
      ['action', 'pane', 'outcome', 'exit_code', 'reason'],
    ]);
    // Surface order: the blocked pane ranks before the idle one.
    expect(doc.results.map((x) => [x.pane, x.outcome, x.reason])).toEqual([
      [a.pane, 'sent', null],
      [b.pane, 'refused', 'gated'],
    ]);
    expect(r.code).toBe(4);
    await waitFor(() => a.keys() === '1', 'the approval key');
    // One match is still an envelope under --all.
    const one = await act('approve', '--agent', 'claude', '--state', 'idle', '--all', '--json');
    expect(keys(json(one.stdout))).toEqual(['schema', 'results']);
  });

  test('--list --json: exact keys, when object, and fireable/reason only with --pane', async () => {
    const a = await claude('claude-idle.txt');
    // The list judges the stored stamp; one cycle stamps it, as any ambient driver would.
    await tma(['--socket-name', s.name, 'ls'], { env });
    const plain = json((await act('--list', '--json')).stdout) as { actions: Record<string, unknown>[] };
    expect(keys(plain)).toEqual(['schema', 'actions']);
    expect(plain.actions.map((x) => x.name)).toEqual(['approve', 'deny', 'interrupt', 'compact']);
    for (const x of plain.actions) expect(keys(x)).toEqual(['name', 'label', 'kind', 'agents', 'when']);
    expect(keys(plain.actions[0]!.when)).toEqual(['state', 'detail', 'context_pct_min', 'context_pct_max']);
    expect(plain.actions[0]).toMatchObject({
      kind: 'keys',
      agents: ['claude', 'codex', 'gemini', 'opencode'],
      when: {
        state: ['blocked'],
        detail: ['permission', 'auto-mode-offer', 'auto-mode-check', 'permission-cursor-no', 'permission-cursor-yes'],
        context_pct_min: null,
        context_pct_max: null,
      },
    });
    expect(plain.actions[3]!.when).toEqual({ state: ['idle'], detail: [], context_pct_min: 75, context_pct_max: null });

    const onPane = json((await act('--list', '--json', '--pane', a.pane)).stdout) as { actions: Record<string, unknown>[] };
    for (const x of onPane.actions) expect(keys(x)).toEqual(['name', 'label', 'kind', 'agents', 'when', 'fireable', 'reason', 'lane']);
    // No hook waits on this pane: every keys action answers it with keys.
    expect(onPane.actions.map((x) => x.lane)).toEqual(['keys', 'keys', 'keys', 'keys']);
    expect(onPane.actions.map((x) => [x.name, x.fireable, x.reason])).toEqual([
      ['approve', false, 'gated'],
      ['deny', false, 'gated'],
      ['interrupt', false, 'gated'],
      ['compact', false, 'gated'],
    ]);
    expect((await act('--list', '--pane', a.pane)).stdout).toContain('approve keys claude,codex,gemini,opencode refused: gated lane: keys\n');
    expect((await act('--list', '--json', '--pane', '%99')).code).toBe(3);
  });

  test('--dry-run reports and touches nothing: no keys, no lock, exit 0 even when refused; --json is one document', async () => {
    const a = await claude('claude-permission-dialog.txt');
    // A dry run judges the stored stamp and never detects: before any cycle there is no agent.
    expect((await act('approve', '--pane', a.pane, '--dry-run')).stdout).toContain('\ngate: refused: wrong-agent\n');
    await tma(['--socket-name', s.name, 'ls'], { env });
    const doc = await act('approve', '--pane', a.pane, '--dry-run', '--json');
    expect(doc.code).toBe(0);
    const d = json(doc.stdout);
    expect(Object.keys(d)).toEqual(['schema', 'action', 'pane', 'agent', 'fireable', 'reason', 'effect', 'prompt_id', 'pending_summary']);
    expect(d).toMatchObject({ schema: 1, action: 'approve', pane: a.pane, agent: 'claude', fireable: true, reason: null, effect: 'keys: 1' });
    expect(d.prompt_id).toMatch(/^[0-9a-f]{16}$/);
    expect(d.pending_summary).toBe('Bash command: rm -rf build/.cache');
    const one = await act('approve', '--pane', a.pane, '--dry-run');
    expect(one.code).toBe(0);
    expect(one.stdout.split('\n').slice(0, 5)).toEqual([`action: approve`, `pane: ${a.pane}`, 'agent: claude', 'gate: fireable', 'effect: keys: 1']);
    expect(one.stdout).toContain('\nasks: Bash command: rm -rf build/.cache\n');
    expect(one.stdout).toContain('\ncontext:\n');
    expect(one.stdout).toMatch(/\n {2}TMA_STATE=blocked \(\d+ ms old\)\n/);
    expect(one.stdout).toContain(`\n  TMA_PANE=${a.pane} (live)\n`);
    const refused = await act('interrupt', '--pane', a.pane, '--dry-run');
    expect(refused.code).toBe(0);
    expect(refused.stdout).toContain('\ngate: refused: gated\n');
    const gone = await act('approve', '--pane', '%99', '--dry-run');
    expect(gone.code).toBe(0);
    expect(gone.stdout).toContain('\ngate: vanished (pane gone)\n');
    const many = await act('approve', '--all', '--dry-run');
    expect(many.stdout).toBe(`targets: 1\n${a.pane} would fire\n`);
    expect(await settledKeys(a)).toBe('');
    expect(s.option(a.pane, '@agent_action')).toBe('');
  });
});

describe('the broker under its lock (library call on real tmux)', () => {
  /**
   * A runner that lets the test change the pane right after the broker took the lock, i.e.
   * between the first gate and the re-read under the lock; it records every command.
   */
  async function racingRunner(afterAcquire: () => void) {
    const { openRunner } = await import('../../collector/tmux/runner.js');
    const real = await openRunner({ kind: 'name', name: s.name }, { mode: 'spawn', bin: 'tmux' });
    const seen: string[][] = [];
    const runner = {
      mode: real.mode,
      close: () => real.close(),
      run: async (argv: string[], o?: object) => (seen.push(argv), real.run(argv, o)),
      runChain: async (cmds: string[][], o?: object) => {
        seen.push(...cmds);
        const out = await real.runChain(cmds, o);
        // The acquire chain (the only chain that writes the lock): read, acquire, read back.
        if (cmds.some((c) => c[0] === 'set-option' && c.includes('@agent_action')) && cmds.at(-1)?.[0] === 'display-message') afterAcquire();
        return out;
      },
    };
    return { runner, seen };
  }

  /**
   * Stamp the pane with a cycle in a later second than its paint. tmux gives window activity in
   * whole seconds, so a stamp in the paint's own second cannot prove the screen did not move
   * after it, and the broker would look again.
   */
  async function stampedAfterPaint(): Promise<void> {
    await new Promise((r) => setTimeout(r, 1005 - (Date.now() % 1000)));
    await tma(['--socket-name', s.name, 'ls'], { env });
  }

  async function fire(pane: string, afterAcquire: () => void) {
    const { fireAction } = await import('../../collector/act/broker.js');
    const { loadActions } = await import('../../collector/manifest-files.js');
    const set = loadActions({ env: {} });
    if (!set.ok) throw new Error('bundled actions failed to load');
    const { runner, seen } = await racingRunner(afterAcquire);
    // The stamp is fresh (a cycle just ran, after the screen last moved: see stampedAfterPaint),
    // so the broker never needs its engine to detect. Its server facts name the socket the broker
    // keeps its own answered record under.
    const socketPath = s.tmux('display-message', '-p', '#{socket_path}').trim();
    const engine = {
      manifests: [],
      cycle: async () => {
        throw new Error('no detection expected');
      },
      server: { get: async () => ({ socketPath }) },
    };
    try {
      const r = await fireAction({
        runner,
        engine: engine as never,
        action: set.actions.find((a) => a.name === 'approve')!,
        pane,
        freshnessMs: 60_000,
      });
      return { r, seen };
    } finally {
      runner.close();
    }
  }

  test('the gate is checked again under the lock: a prompt answered in between is refused, nothing sent, lock released', async () => {
    const a = await claude('claude-permission-dialog.txt');
    await stampedAfterPaint();
    expect(s.option(a.pane, '@agent_state')).toBe('blocked');
    let lockSeen = '';
    const { r, seen } = await fire(a.pane, () => {
      lockSeen = s.option(a.pane, '@agent_action');
      s.tmux('set-option', '-p', '-t', a.pane, '@agent_state', 'idle');
    });
    expect(r).toEqual({ schema: 1, action: 'approve', pane: a.pane, outcome: 'refused', exit_code: 4, reason: 'gated' });
    // The lock was really taken (expiry = now + timeout_ms 30000 + 5000 slack), then let go.
    const m = /^(\d+):([0-9a-f]{32}):(\d+):approve$/.exec(lockSeen);
    expect(m).not.toBeNull();
    expect(Number(m![1]) - Date.now()).toBeGreaterThan(30_000);
    expect(Number(m![1]) - Date.now()).toBeLessThanOrEqual(35_000);
    expect(Number(m![3])).toBe(process.pid);
    expect(s.option(a.pane, '@agent_action')).toBe('');
    expect(seen.some((c) => c[0] === 'send-keys')).toBe(false);
    expect(await settledKeys(a)).toBe('');
  });

  test('a different agent process under the lock is wrong-agent, and the lock is released', async () => {
    const a = await claude('claude-permission-dialog.txt');
    await stampedAfterPaint();
    const pid = Number(s.option(a.pane, '@agent_pid'));
    expect(pid).toBeGreaterThan(0);
    const { r } = await fire(a.pane, () => s.tmux('set-option', '-p', '-t', a.pane, '@agent_pid', String(pid + 1)));
    expect(r).toMatchObject({ outcome: 'refused', reason: 'wrong-agent', exit_code: 4 });
    expect(s.option(a.pane, '@agent_action')).toBe('');
    expect(await settledKeys(a)).toBe('');
  });

  test('with nothing changing in between, it sends once and releases', async () => {
    const a = await claude('claude-permission-dialog.txt');
    await stampedAfterPaint();
    const { r, seen } = await fire(a.pane, () => undefined);
    expect(r).toMatchObject({ outcome: 'sent', exit_code: 0, reason: null });
    expect(seen.filter((c) => c[0] === 'send-keys')).toEqual([['send-keys', '-t', a.pane, '1']]);
    expect(s.option(a.pane, '@agent_action')).toBe('');
    await waitFor(() => a.keys() === '1', 'the approval key');
  });
});
