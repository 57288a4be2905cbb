// The dialog on screen, as the prompt id and summary read it (collector/core/dialog-text.ts), and
// the writes that carry them to the pane (collector/engine/prompt-writes.ts).

import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { stripAnsi } from '../../collector/core/ansi.js';
import { lastMatch, normaliseDialog, screenDialog, screenOnly } from '../../collector/core/dialog-text.js';
import { loadManifestSet } from '../../collector/core/manifest-load.js';
import { formatPromptOption } from '../../collector/core/prompt-id.js';
import type { Snapshot, StampedState } from '../../collector/core/types.js';
import { promptWrites } from '../../collector/engine/prompt-writes.js';
import type { PaneRecord } from '../../collector/engine/pane-list.js';
import { bundledManifestDir, readManifestFiles } from '../../collector/manifest-files.js';
import { loadFixture, snapshotOf } from '../support/fixture-file.js';

const SCREENS = fileURLToPath(new URL('../integration/screens/', import.meta.url));
const OWN_FIXTURES = fileURLToPath(new URL('../fixtures/', import.meta.url));
const MANIFESTS = loadManifestSet(readManifestFiles(bundledManifestDir()), []).manifests;
const claude = MANIFESTS.find((m) => m.name === 'claude')!;

const screen = (name: string, visibleHeight: number | null = 24): Snapshot => snapshotOf(loadFixture(join(SCREENS, name)), { visibleHeight });

const snap = (tail: string, visibleHeight: number | null): Snapshot => ({ title: '', tail, visibleHeight, scrollPosition: null, capturedAt: 1000 });

describe('screenOnly', () => {
  it('keeps the rows the pane shows and drops the history above them', () => {
    expect(screenOnly(snap('h1\nh2\nv1\nv2', 2)).tail).toBe('v1\nv2');
    expect(screenOnly(snap('v1\nv2', 5)).tail).toBe('v1\nv2');
    // An unknown height reads the whole capture, never nothing.
    expect(screenOnly(snap('h1\nv1', null)).tail).toBe('h1\nv1');
    expect(screenOnly(snap('h1\nv1', 0)).tail).toBe('h1\nv1');
  });
});

describe('normaliseDialog', () => {
  it('drops escapes and borders, folds breaks and runs of blanks', () => {
    expect(normaliseDialog('\u001b[1m────\u001b[0m\n Bash  command\n│ rm -rf x │\n')).toBe('Bash command rm -rf x');
    expect(normaliseDialog('a b\n   c')).toBe(normaliseDialog('a\nb c'));
  });

  it('keeps a space where one was: "rm -rf / tmp" and "rm -rf /tmp" stay two dialogs', () => {
    expect(normaliseDialog('rm -rf / tmp')).not.toBe(normaliseDialog('rm -rf /tmp'));
  });
});

describe('lastMatch', () => {
  it('is the match that starts last, not the first', () => {
    expect(lastMatch(/x(\d)/, 'x1 x2 x3')?.[1]).toBe('3');
    expect(lastMatch(/x(\d)/g, 'x1 x2')?.[1]).toBe('2');
    expect(lastMatch(/z/, 'x1')).toBeNull();
  });
});

describe('screenDialog', () => {
  it('the same dialog at 80 and 60 columns is one dialog with one summary', () => {
    const wide = screenDialog(claude, screen('claude-resize-wide.txt'));
    const narrow = screenDialog(claude, screen('claude-resize-narrow.txt'));
    expect(wide.summary).toBe('Bash command: npm publish --dry-run');
    expect(narrow).toEqual(wide);
    expect(wide.text).toContain('npm publish --dry-run Check what the package would contain before anything is uploaded');
    // The prose above the dialog is not part of it.
    expect(wide.text).not.toContain('The cache is gone');
  });

  it('an old dialog in the history is not the prompt: the summary is the one on screen', () => {
    const s = screen('claude-scrollback-new-prompt.txt');
    expect(s.tail).toContain('rm -rf build/');
    expect(screenDialog(claude, s).summary).toBe('Bash command: npm publish --dry-run');
    expect(screenDialog(claude, s).text).not.toContain('rm -rf build/');
    // Even with the whole capture in view (height unknown), the last dialog is the one read.
    expect(screenDialog(claude, screen('claude-scrollback-new-prompt.txt', null)).summary).toBe('Bash command: npm publish --dry-run');
  });

  it('codex: the approval laid out narrower, with other output above, is the same dialog', () => {
    const codex = MANIFESTS.find((m) => m.name === 'codex')!;
    // Escapes dropped first, so the test can re-lay one row out by plain text.
    const fx = snapshotOf(loadFixture(join(OWN_FIXTURES, 'codex-approval-dialog.txt')), { visibleHeight: 24 });
    const wide = { ...fx, tail: stripAnsi(fx.tail) };
    const long = "2. Yes, and don't ask again for commands that start with `rm -rf` (p)";
    expect(wide.tail).toContain(long);
    const narrow = {
      ...wide,
      tail: 'more output\n'.repeat(3) + wide.tail.replace(long, "2. Yes, and don't ask again for commands\n     that start with `rm -rf` (p)"),
    };
    expect(screenDialog(codex, narrow)).toEqual(screenDialog(codex, wide));
    expect(screenDialog(codex, wide).summary).toBe('rm -rf tmp/generated');
  });

  it('two different dialogs are two texts', () => {
    const a = screenDialog(claude, screen('claude-resize-wide.txt')).text;
    const b = screenDialog(claude, screen('claude-scrollback-new-prompt.txt')).text;
    expect(a).not.toBe(b);
  });
});

describe('promptWrites', () => {
  const rec = (options: PaneRecord['options']): PaneRecord => ({
    paneId: '%1',
    panePid: 1,
    sessionName: 's',
    windowIndex: 0,
    paneIndex: 0,
    currentCommand: 'claude',
    windowActivity: 0,
    alternateOn: false,
    scrollPosition: null,
    height: 24,
    currentPath: '/',
    options,
    windowSummary: '',
    sessionSummary: '',
    title: '',
  });
  const stamp = { state: 'blocked', detail: 'permission', since: 500, evidenceAt: 900 } as StampedState;
  const summaryWrites = (cmds: string[][]) => cmds.filter((c) => c.includes('@agent_pending_summary'));

  it('writes the summary of the dialog on screen over one an old dialog in history left', () => {
    const cmds = promptWrites(rec({ '@agent_pending_summary': 'Bash command: rm -rf build/' }), stamp, claude, screen('claude-scrollback-new-prompt.txt'));
    expect(summaryWrites(cmds)).toEqual([['set-option', '-p', '-t', '%1', '@agent_pending_summary', 'Bash command: npm publish --dry-run']]);
  });

  it('a new prompt with no readable summary clears the last prompt’s, even with no dialog rule matching', () => {
    const old = formatPromptOption(400, '0123456789abcdef');
    const cmds = promptWrites(rec({ '@agent_pending_summary': 'Bash command: rm -rf build/', '@tma_prompt_id': old }), stamp, claude, snap('nothing here', 24));
    expect(cmds.look?.id).toMatch(/^[0-9a-f]{16}$/);
    expect(summaryWrites(cmds)).toEqual([['set-option', '-p', '-u', '-t', '%1', '@agent_pending_summary']]);
  });

  it('the same prompt held while its dialog repaints keeps its summary', () => {
    const held = formatPromptOption(500, '0123456789abcdef');
    const cmds = promptWrites(rec({ '@agent_pending_summary': 'Bash command: npm publish', '@tma_prompt_id': held }), stamp, claude, snap('repainting', 24));
    expect(cmds.look?.id).toBe('0123456789abcdef');
    expect(summaryWrites(cmds)).toEqual([]);
  });
});
