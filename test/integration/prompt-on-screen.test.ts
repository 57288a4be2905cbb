// What an approver reads is the dialog on screen now (issue 37): the same dialog laid out again
// at another width keeps its prompt_id, so an approve bound to the id read before a resize is
// sent; an old dialog still in the history never names the prompt the screen asks.

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { REPO, ScratchTmux, tma, waitFor, type CliResult } from '../support/scratch-tmux.js';

const SCREENS_DIR = join(REPO, 'test/integration/screens');
const WIDE = join(SCREENS_DIR, 'claude-resize-wide.txt');
const NARROW = join(SCREENS_DIR, 'claude-resize-narrow.txt');
const SCROLLBACK = join(SCREENS_DIR, 'claude-scrollback-new-prompt.txt');

let s: ScratchTmux;
let env: NodeJS.ProcessEnv;

beforeEach(() => {
  s = new ScratchTmux('onscreen');
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

async function row(pane: string): Promise<Record<string, unknown> | undefined> {
  const r = await tma(['--socket-name', s.name, 'ls', '--json'], { env, timeoutMs: 60_000 });
  return (JSON.parse(r.stdout) as { agents: Record<string, unknown>[] }).agents.find((a) => a.pane === pane);
}

describe('the prompt on screen', { timeout: 90_000 }, () => {
  test('a resize and the same dialog laid out narrower keep the prompt_id; an approve bound to it is sent', async () => {
    const a = await s.standIn(s.start(), 'claude', WIDE);
    const before = await row(a.pane);
    expect(before).toMatchObject({ state: 'blocked', pending_summary: 'Bash command: npm publish --dry-run' });
    const id = before!.prompt_id as string;
    expect(id).toMatch(/^[0-9a-f]{16}$/);

    s.tmux('resize-window', '-t', a.pane, '-x', '60', '-y', '24');
    expect(s.tmux('display-message', '-p', '-t', a.pane, '#{pane_width}').trim()).toBe('60');
    // The agent repaints for the new width: borders shorter, prose broken at other words.
    // (Both paints end on the same line, so the wait is for a row only the narrow one has.)
    await a.paint(NARROW);
    await waitFor(() => s.tmux('capture-pane', '-p', '-t', a.pane).includes('      in ~/ledger'), 'the narrow repaint');

    const after = await row(a.pane);
    expect(after).toMatchObject({ state: 'blocked', pending_summary: 'Bash command: npm publish --dry-run', prompt_id: id });
    expect(json(await act('approve', '--pane', a.pane, '--json', '--expect-prompt', id))).toMatchObject({ outcome: 'sent' });
    await sleep(300);
    expect(a.keys()).toBe('1');
  });

  test('the old dialog in history, a different one on screen: ls and --dry-run show the new command', async () => {
    const a = await s.standIn(s.start(), 'claude', SCROLLBACK);
    // The setting: the old dialog's command is in the history the capture reads, not on screen.
    expect(s.tmux('capture-pane', '-p', '-t', a.pane)).not.toContain('rm -rf build/');
    expect(s.tmux('capture-pane', '-p', '-t', a.pane, '-S', '-50')).toContain('rm -rf build/');

    const r = await row(a.pane);
    expect(r).toMatchObject({ state: 'blocked', pending_summary: 'Bash command: npm publish --dry-run' });
    const dry = await act('approve', '--pane', a.pane, '--dry-run');
    expect(dry.stdout).toContain('\nasks: Bash command: npm publish --dry-run\n');
    expect(dry.stdout).not.toContain('rm -rf build/');
    expect(json(await act('approve', '--pane', a.pane, '--dry-run', '--json'))).toMatchObject({
      pending_summary: 'Bash command: npm publish --dry-run',
      prompt_id: r!.prompt_id,
    });
    expect(a.keys()).toBe('');
  });
});
