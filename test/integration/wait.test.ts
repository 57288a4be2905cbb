// `tma wait` against a real tmux server with stand-in agents. The CLI must be built first.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ROW_KEYS } from '../../shared/row.js';
import { ScratchTmux, tma, waitFor, type CliResult } from '../support/scratch-tmux.js';

let t: ScratchTmux;
let dir: string;
let config: string;

beforeEach(() => {
  t = new ScratchTmux('wait');
  dir = mkdtempSync(join(tmpdir(), 'tma-wait-'));
  config = join(dir, 'config.toml');
  // Every cycle re-detects, so a repaint is seen on the next tick.
  writeFileSync(config, '[fold]\nfreshness_secs = 0\n');
});

afterEach(() => {
  t.kill();
  rmSync(dir, { recursive: true, force: true });
});

const run = (args: string[], env: NodeJS.ProcessEnv = {}) => tma(['--socket-name', t.name, '--config', config, ...args], { env, timeoutMs: 25_000 });

/** Start a long-running wait and remember whether it has ended. */
function background(args: string[]) {
  const state = { settled: false };
  const result = run(args).then((r) => {
    state.settled = true;
    return r;
  });
  return { state, result };
}

const stateOf = (pane: string) => t.option(pane, '@agent_state');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('tma wait (usage and server)', () => {
  it('refuses a missing target, --count 0 and --pane with a selector (2), but not --count 1', async () => {
    const none = await run(['wait', '--until', 'idle']);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/^tma: wait needs a target/);
    expect((await run(['wait', '--until', 'idle', '--count', '0'])).code).toBe(2);
    expect((await run(['wait', '--until', 'idle', '--pane', '%0', '--session', 'main'])).code).toBe(2);
    // With no server running, a valid call gets as far as tmux: exit 1, not a usage error.
    const noServer = await run(['wait', '--until', 'idle', '--count', '1', '--timeout', '0']);
    expect(noServer).toEqual({ code: 1, stdout: '', stderr: 'tma: no tmux server running\n' });
  });

  it('--all over an empty scope is a usage error (2); --any times out with 124 after one look', async () => {
    t.start();
    const empty = await run(['wait', '--until', 'idle', '--all']);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('nothing to wait for');
    const timedOut = await run(['wait', '--until', 'idle', '--any', '--timeout', '0']);
    expect(timedOut).toEqual({ code: 124, stdout: '', stderr: 'tma: timed out after 0s waiting for idle\n' });
  });
});

describe('tma wait (stand-in agents)', () => {
  it('--all returns once every stand-in is idle, not when only one is', async () => {
    const a = t.start();
    const b = t.newPane();
    const sa = await t.standIn(a, 'claude', 'claude-working.txt');
    const sb = await t.standIn(b, 'claude', 'claude-working.txt');
    const w = background(['wait', '--until', 'idle', '--all', '--json']);
    await waitFor(() => stateOf(a) === 'working' && stateOf(b) === 'working', 'both stand-ins seen working');

    void sa.paint('claude-idle.txt');
    await waitFor(() => stateOf(a) === 'idle', 'first stand-in idle', 10_000);
    // The cycle that stamped the first one idle saw the second still working.
    await sleep(1200);
    expect(w.state.settled).toBe(false);

    void sb.paint('claude-idle.txt');
    const r = await w.result;
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    const doc = JSON.parse(r.stdout) as { schema: number; agents: { pane: string; state: string }[] };
    expect(doc.schema).toBe(1);
    expect(doc.agents.map((x) => x.pane).sort()).toEqual([a, b].sort());
    expect(doc.agents.every((x) => x.state === 'idle')).toBe(true);
    expect(r.stdout.endsWith('}\n')).toBe(true);
  });

  it('--pane exits 3 when the watched pane is killed', async () => {
    t.start();
    const pane = t.newPane();
    await t.standIn(pane, 'claude', 'claude-working.txt');
    const w = background(['wait', '--until', 'blocked', '--pane', pane]);
    await waitFor(() => stateOf(pane) === 'working', 'stand-in seen');
    t.tmux('kill-pane', '-t', pane);
    const r: CliResult = await w.result;
    expect(r).toEqual({ code: 3, stdout: '', stderr: `tma: the waited-on pane ${pane} vanished before reaching blocked\n` });
  });

  it('--pane exits 4 when the agent exits and its pane stays', async () => {
    t.start();
    const pane = t.newPane();
    // The stand-in replaced the pane's shell; keeping the dead pane keeps the pane itself alive.
    t.tmux('set-option', '-w', '-t', pane, 'remain-on-exit', 'on');
    const s = await t.standIn(pane, 'claude', 'claude-working.txt');
    const w = background(['wait', '--until', 'idle', '--pane', pane]);
    await waitFor(() => stateOf(pane) === 'working', 'stand-in seen');
    s.exit();
    const r = await w.result;
    expect(r).toEqual({ code: 4, stdout: '', stderr: `tma: the agent on pane ${pane} exited before reaching idle (exit 4)\n` });
    expect(t.tmux('list-panes', '-a', '-F', '#{pane_id}')).toContain(pane);
  });

  it("--since with a row's episode_ms waits for the next completion, not the last one", async () => {
    const pane = t.start();
    await t.standIn(pane, 'claude', 'claude-idle.txt');
    const hook = async (kind: string) => {
      const r = await run(['event', '--agent', 'claude', '--kind', kind], { TMUX_PANE: pane });
      expect(r.code).toBe(0);
    };
    const completion = async () => {
      await hook('UserPromptSubmit');
      await waitFor(() => stateOf(pane) === 'working', 'turn started');
      await sleep(20);
      await hook('Stop');
      await waitFor(() => stateOf(pane) === 'idle', 'turn completed');
    };
    await completion();
    const ls = await run(['ls', '--json']);
    const [row] = (JSON.parse(ls.stdout) as { agents: { episode_ms: number; done: boolean }[] }).agents;
    expect(row?.done).toBe(true);
    const floor = row!.episode_ms;

    // The strict floor, at one look each: just under it matches the last completion, at it does not.
    const under = await run(['wait', '--until', 'done', '--pane', pane, '--since', String(floor - 1), '--timeout', '0']);
    expect(under.code).toBe(0);
    // Text output is the `ls` line of the row.
    expect(under.stdout).toBe((await run(['ls', '--pane', pane])).stdout);
    expect(under.stdout.startsWith(`${pane}\tclaude\tidle\t`)).toBe(true);
    const at = await run(['wait', '--until', 'done', '--pane', pane, '--since', String(floor), '--timeout', '0']);
    expect(at).toEqual({ code: 124, stdout: '', stderr: `tma: timed out after 0s waiting for done since ${floor}\n` });

    const w = background(['wait', '--until', 'done', '--pane', pane, '--since', String(floor), '--json']);
    await sleep(1500);
    expect(w.state.settled).toBe(false);
    await completion();
    const r = await w.result;
    expect(r.code).toBe(0);
    const next = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(Object.keys(next)[0]).toBe('schema');
    expect(next.pane).toBe(pane);
    expect(next.done).toBe(true);
    expect(next.episode_ms as number).toBeGreaterThan(floor);
  });
});

describe('tma wait --json documents', () => {
  it('single-pane targets print one row object with schema first; --all/--count print the rows document', async () => {
    const pane = t.start();
    await t.standIn(pane, 'claude', 'claude-idle.txt');
    const row = ['schema', ...ROW_KEYS];
    for (const target of [['--pane', pane], ['--agent', 'claude'], ['--any']]) {
      const r = await run(['wait', '--until', 'idle', ...target, '--json', '--timeout', '5']);
      expect(r.code, target.join(' ')).toBe(0);
      expect(r.stdout.endsWith('}\n')).toBe(true);
      const doc = JSON.parse(r.stdout) as Record<string, unknown>;
      expect(Object.keys(doc), target.join(' ')).toEqual(row);
      expect(doc.schema).toBe(1);
      expect(doc.pane).toBe(pane);
    }
    for (const target of [['--all'], ['--count', '1']]) {
      const r = await run(['wait', '--until', 'idle', ...target, '--json', '--timeout', '5']);
      expect(r.code, target.join(' ')).toBe(0);
      const doc = JSON.parse(r.stdout) as { agents: Record<string, unknown>[] };
      expect(Object.keys(doc), target.join(' ')).toEqual(['schema', 'agents']);
      expect(doc.agents.map((a) => Object.keys(a))).toEqual([[...ROW_KEYS]]);
    }
  });
});

describe('tma wait reloads its configuration every tick', () => {
  it('a config change takes effect mid-wait; a broken file is told once and the last good one kept', async () => {
    writeFileSync(config, '[fold]\nfreshness_secs = 0\n[[agent]]\nname = "claude"\nenabled = false\n');
    const pane = t.start();
    await t.standIn(pane, 'claude', 'claude-idle.txt');
    const w = background(['wait', '--until', 'idle', '--any']);
    await sleep(1500);
    expect(w.state.settled).toBe(false);
    // Broken for a few ticks: the wait goes on with what it had.
    writeFileSync(config, '[fold\n');
    await sleep(2500);
    expect(w.state.settled).toBe(false);
    expect(stateOf(pane)).toBe('');
    writeFileSync(config, '[fold]\nfreshness_secs = 0\n');
    const r = await w.result;
    expect(r.code).toBe(0);
    expect(r.stdout.startsWith(`${pane}\tclaude\tidle\t`)).toBe(true);
    const notes = r.stderr.split('\n').filter(Boolean);
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatch(/^tma: .*config\.toml.*\(keeping the last good configuration\)$/);
  });
});
