// A prompt is answered once, on one machine: approves a moment apart (distinct slots, separate
// processes), a slow agent that keeps the answered prompt painted, two prompts in one blocked run,
// and one slot sent by several callers at once. Stand-ins log every byte, so "one key" is counted.
// The default freshness window (3 s) is kept on purpose: a fresh stamp is what used to be trusted.

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { REPO, ScratchTmux, tma, waitFor, type CliResult, type StandIn } from '../support/scratch-tmux.js';
import { openBroker } from '../support/in-process-broker.js';
import { SCREENS } from '../support/screens.js';

const SECOND_PROMPT = join(REPO, 'test/integration/screens/claude-second-prompt.txt');

let s: ScratchTmux;
let env: NodeJS.ProcessEnv;

beforeEach(() => {
  s = new ScratchTmux('once');
  mkdirSync(join(s.dir, 'state'));
  env = { XDG_STATE_HOME: join(s.dir, 'state') };
});

afterEach(() => s.kill());

// Generous: on a loaded 2-core machine a CLI start alone can take seconds.
const act = (...args: string[]) => tma(['--socket-name', s.name, 'act', ...args], { env, timeoutMs: 60_000 });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const json = (r: CliResult): Record<string, unknown> => {
  try {
    return JSON.parse(r.stdout) as Record<string, unknown>;
  } catch {
    throw new Error(`not JSON: ${JSON.stringify(r.stdout)}; exit ${r.code}; stderr: ${r.stderr}`);
  }
};

async function settledKeys(a: StandIn): Promise<string> {
  await sleep(300);
  return a.keys();
}

async function lsRows(): Promise<Record<string, unknown>[]> {
  const r = await tma(['--socket-name', s.name, 'ls', '--json'], { env, timeoutMs: 60_000 });
  return (JSON.parse(r.stdout) as { agents: Record<string, unknown>[] }).agents;
}

/** Start `tma act approve` at each offset (ms after the first), each with its own slot. */
async function approvesAt(pane: string, offsets: number[]): Promise<Record<string, unknown>[]> {
  const t0 = Date.now();
  const runs = offsets.map(async (ms, i) => {
    await sleep(ms - (Date.now() - t0));
    return json(await act('approve', '--pane', pane, '--json', '--slot', `tap-${i}`));
  });
  return Promise.all(runs);
}

describe('one machine', { timeout: 90_000 }, () => {
  test('approves at 0, 0.3, 1, 2 and 5 s after the first, distinct slots: exactly one key', async () => {
    const a = await s.standIn(s.start(), 'claude', SCREENS.claudeBlocked);
    const results = await approvesAt(a.pane, [0, 300, 1000, 2000, 5000]);
    expect(await settledKeys(a)).toBe('1');
    expect(results.filter((r) => r.outcome === 'sent')).toHaveLength(1);
    // The later ones are refused: the prompt on the screen is the one already answered (or, for
    // one that overlapped the first, the pane was still locked).
    for (const r of results.slice(1)) {
      expect(r.outcome).toBe('refused');
      expect(['answered', 'locked']).toContain(r.reason);
    }
    // However slow the machine, the one 5 s later met the pane unlocked: the prompt was answered.
    expect(results[4]!.reason).toBe('answered');
  });

  test('a slow agent keeps the prompt painted 2 s after the key: one key, the second approve says answered', async () => {
    const a = await s.standIn(s.start(), 'claude', SCREENS.claudeBlocked, { afterKey: { fixture: SCREENS.claudeWorking, delayMs: 2000 } });
    // The second approve comes from a broker already running (as in a collector): a new CLI
    // process can take longer than 2 s to start on a loaded machine and would miss the window.
    const broker = await openBroker(s.name, env);
    try {
      const first = await act('approve', '--pane', a.pane, '--json');
      expect(json(first)).toMatchObject({ outcome: 'sent' });
      await waitFor(() => a.keys() === '1', 'the key at the stand-in');
      const second = await broker.fire('approve', a.pane);
      // Still painted when the second approve had already been answered: it met the old prompt.
      expect(s.tmux('capture-pane', '-p', '-t', a.pane)).toContain('Do you want to proceed?');
      expect(second).toMatchObject({ outcome: 'refused', reason: 'answered', exit_code: 4 });
    } finally {
      broker.close();
    }
    await waitFor(() => !s.tmux('capture-pane', '-p', '-t', a.pane).includes('Do you want to proceed?'), 'the repaint', 6000);
    // After the repaint: refused either way, by the gate or (while the fold still holds blocked
    // with no dialog on screen) as the prompt already answered.
    const third = json(await act('approve', '--pane', a.pane, '--json'));
    expect(third.outcome).toBe('refused');
    expect(['gated', 'answered']).toContain(third.reason);
    expect(await settledKeys(a)).toBe('1');
  });

  test('two prompts in one blocked run: bound to the first is refused prompt-changed, bound to the second fires', async () => {
    const a = await s.standIn(s.start(), 'claude', SCREENS.claudeBlocked, { afterKey: { fixture: SECOND_PROMPT, delayMs: 0 } });
    const [row1] = await lsRows();
    expect(row1).toMatchObject({ state: 'blocked', pending_summary: 'Bash command: rm -rf build/.cache' });
    const first = row1!.prompt_id as string;
    expect(first).toMatch(/^[0-9a-f]{16}$/);
    expect(json(await act('approve', '--pane', a.pane, '--json', '--expect-prompt', first))).toMatchObject({ outcome: 'sent' });
    await waitFor(() => s.tmux('capture-pane', '-p', '-t', a.pane).includes('npm publish --dry-run'), 'the second prompt');

    const late = await act('approve', '--pane', a.pane, '--json', '--expect-prompt', first);
    expect(json(late)).toMatchObject({ outcome: 'refused', reason: 'prompt-changed', exit_code: 4 });
    expect(late.code).toBe(4);
    const [row2] = await lsRows();
    expect(row2).toMatchObject({ state: 'blocked', episode_ms: row1!.episode_ms, pending_summary: 'Bash command: npm publish --dry-run' });
    const second = row2!.prompt_id as string;
    expect(second).toMatch(/^[0-9a-f]{16}$/);
    expect(second).not.toBe(first);
    expect(json(await act('approve', '--pane', a.pane, '--json', '--expect-prompt', second))).toMatchObject({ outcome: 'sent' });
    expect(await settledKeys(a)).toBe('11');
  });

  test('five callers with one slot at once all get the first result', async () => {
    const a = await s.standIn(s.start(), 'claude', SCREENS.claudeBlocked);
    const all = await Promise.all([0, 1, 2, 3, 4].map(() => act('approve', '--pane', a.pane, '--json', '--slot', 'same')));
    const docs = all.map(json);
    expect(docs.map((d) => d.outcome)).toEqual(['sent', 'sent', 'sent', 'sent', 'sent']);
    expect(docs.map((d) => d.cached).sort()).toEqual([false, true, true, true, true]);
    expect(all.map((r) => r.code)).toEqual([0, 0, 0, 0, 0]);
    expect(await settledKeys(a)).toBe('1');
  });

  test('pending_summary and prompt_id on the local row of every agent with a blocked screen', async () => {
    const want: [string, string, string][] = [
      ['claude', SCREENS.claudeBlocked, 'Bash command: rm -rf build/.cache'],
      ['codex', SCREENS.codexBlocked, 'rm -rf tmp/generated'],
      ['agent', 'cursor-approval-dialog.txt', 'curl -sI https://example.com'],
      ['node', SCREENS.geminiBlocked, 'Shell: rm -rf tmp/generated'],
      ['opencode', SCREENS.opencodeBlocked, 'Edit src/config/loader.ts'],
    ];
    const panes: string[] = [];
    for (const [i, [cmd, fixture]] of want.entries()) {
      const pane = i === 0 ? s.start() : s.newPane();
      panes.push((await s.standIn(pane, cmd, fixture)).pane);
    }
    const rows = await lsRows();
    const got = panes.map((p) => rows.find((r) => r.pane === p));
    expect(got.map((r) => [r?.agent, r?.state, r?.pending_summary])).toEqual([
      ['claude', 'blocked', want[0]![2]],
      ['codex', 'blocked', want[1]![2]],
      ['cursor', 'blocked', want[2]![2]],
      ['gemini', 'blocked', want[3]![2]],
      ['opencode', 'blocked', want[4]![2]],
    ]);
    for (const r of got) expect(r?.prompt_id).toMatch(/^[0-9a-f]{16}$/);
    expect(new Set(got.map((r) => r?.prompt_id)).size).toBe(5);
    // --dry-run shows what approve would answer, as text and as JSON.
    const dry = await act('approve', '--pane', panes[0]!, '--dry-run');
    expect(dry.stdout).toContain('\nasks: Bash command: rm -rf build/.cache\n');
    expect(json(await act('approve', '--pane', panes[1]!, '--dry-run', '--json'))).toMatchObject({ pending_summary: 'rm -rf tmp/generated', fireable: true });
  });
});
