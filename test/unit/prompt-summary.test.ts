// What each bundled agent's blocked screen asks, read from our own fixtures through the
// manifests' [prompt] sections, and the prompt fingerprint's properties.

import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadManifestSet } from '../../collector/core/manifest-load.js';
import { cleanCall, oneLineSummary, SUMMARY_MAX } from '../../collector/core/pending-text.js';
import { blockedRuleSaw, formatAnswered, formatPromptOption, parseAnswered, promptId, promptIdFromOption } from '../../collector/core/prompt-id.js';
import { screenSummaryRaw } from '../../collector/core/dialog-text.js';
import { bundledManifestDir, readManifestFiles } from '../../collector/manifest-files.js';
import { EXPECTATIONS } from '../fixtures/expectations.js';
import { loadFixture, snapshotOf } from '../support/fixture-file.js';

const DIR = fileURLToPath(new URL('../fixtures/', import.meta.url));
const MANIFESTS = loadManifestSet(readManifestFiles(bundledManifestDir()), []).manifests;

const SUMMARIES: Record<string, string> = {
  'claude-permission-dialog.txt': 'Bash command: rm -rf build/.cache',
  // 2.1.332: the command, not the "Tip: auto mode…" line or the call's description.
  'claude-2-1-332-permission-dialog.txt': 'Bash command: echo ran >> /home/dev/ledger/ran.txt',
  'claude-2-1-332-auto-mode-offer.txt':
    'Make auto mode your default permission mode?: Auto mode lets Claude handle permission prompts automatically. Claude checks each tool call for risky actions and',
  // Captured live (auto mode, the fake model server as the gateway): the title and what it says.
  'claude-2-1-332-auto-mode-cannot-check.txt':
    "Auto mode can't check actions in this session: Auto mode's safety check runs on the server. Your requests go through 127.0.0.1:8787, and the check isn't getting",
  // The No-first approval that follows "stay": the command, wherever the cursor is.
  'claude-2-1-332-auto-mode-approval.txt': `Bash command: python3 -c "open('ran.txt','a').write('two\\n')"`,
  'claude-2-1-332-auto-mode-approval-cursor-yes.txt': `Bash command: python3 -c "open('ran.txt','a').write('two\\n')"`,
  'claude-trust-dialog.txt': 'Accessing workspace:: /home/dev/ledger',
  'codex-approval-dialog.txt': 'rm -rf tmp/generated',
  'cursor-approval-dialog.txt': 'curl -sI https://example.com',
  'gemini-approval-dialog.txt': 'Shell: rm -rf tmp/generated',
  'gemini-approval-dialog-256-colour.txt': 'Shell: touch /srv/ledger/out/report.txt',
  'opencode-permission-dialog.txt': 'Edit src/config/loader.ts',
  'opencode-external-directory-dialog.txt': 'Access external directory /srv/exports/2026-11',
  'opencode-shell-command-dialog.txt': 'Shell command: tar czf /srv/exports/2026-11.tgz /srv/exports/2026-11',
};

function screenOf(name: string) {
  const fx = loadFixture(join(DIR, name));
  const m = MANIFESTS.find((x) => x.name === fx.agent)!;
  return { fx, m, snap: snapshotOf(fx, { visibleHeight: null, offsetMs: 0 }) };
}

describe('the summary a blocked screen shows', () => {
  const blocked = readdirSync(DIR)
    .filter((n) => EXPECTATIONS[n]?.verdict === 'blocked')
    .sort();

  it('every blocked fixture has an expected summary, and every agent with one is covered', () => {
    expect(blocked.sort()).toEqual(Object.keys(SUMMARIES).sort());
    const agents = new Set(blocked.map((n) => n.split('-')[0]));
    for (const m of MANIFESTS) if (m.rules.some((r) => r.state === 'blocked')) expect(agents.has(m.name)).toBe(true);
  });

  for (const name of Object.keys(SUMMARIES)) {
    it(name, () => {
      const { m, snap } = screenOf(name);
      expect(oneLineSummary(screenSummaryRaw(m, snap))).toBe(SUMMARIES[name]);
    });
  }
});

describe('oneLineSummary', () => {
  it('is one line without control characters and at most 200 characters', () => {
    expect(oneLineSummary('a\nb\tc\u001b[31md\u0007e\u009b')).toBe('a b cde');
    const long = oneLineSummary('x'.repeat(500))!;
    expect([...long].length).toBe(SUMMARY_MAX);
    expect(oneLineSummary('  \n ')).toBeNull();
    expect(cleanCall('{"command":"ls\u0000"}')).toBe('{"command":"ls"}');
  });
});

describe('prompt ids', () => {
  const base = { agent: 'claude', seen: 'Bash command\n rm -rf x', evidenceAt: 1000, permissionRequest: null, pendingCall: null };

  it('are 16 hex digits, stable, and change with the prompt, the request and the call', () => {
    const id = promptId(base);
    expect(id).toMatch(/^[0-9a-f]{16}$/);
    expect(promptId({ ...base })).toBe(id);
    expect(promptId({ ...base, seen: 'Bash command\n rm -rf y' })).not.toBe(id);
    expect(promptId({ ...base, agent: 'codex' })).not.toBe(id);
    expect(promptId({ ...base, permissionRequest: 'per_1' })).not.toBe(id);
    expect(promptId({ ...base, pendingCall: '{}' })).not.toBe(id);
    // Trailing blanks a repaint may add or drop do not make another prompt.
    expect(promptId({ ...base, seen: 'Bash command   \n rm -rf x  ' })).toBe(id);
  });

  it('the rule text differs between two different Claude dialogs', () => {
    const a = screenOf('claude-permission-dialog.txt');
    const b = screenOf('claude-trust-dialog.txt');
    expect(blockedRuleSaw(a.m, a.snap)).not.toBeNull();
    expect(blockedRuleSaw(a.m, a.snap)).not.toBe(blockedRuleSaw(b.m, b.snap));
    expect(blockedRuleSaw(screenOf('claude-idle.txt').m, screenOf('claude-idle.txt').snap)).toBeNull();
  });

  it('the pane option only answers for its own episode', () => {
    const id = promptId(base);
    expect(promptIdFromOption(formatPromptOption(1000, id), 1000)).toBe(id);
    expect(promptIdFromOption(formatPromptOption(999, id), 1000)).toBeNull();
    expect(promptIdFromOption('garbage', 1000)).toBeNull();
    expect(promptIdFromOption(undefined, 1000)).toBeNull();
  });

  it('the answered marker round-trips', () => {
    const id = promptId(base);
    expect(parseAnswered(formatAnswered({ promptId: id, at: 5 }))).toEqual({ promptId: id, at: 5 });
    expect(parseAnswered(formatAnswered({ promptId: null, at: 5 }))).toEqual({ promptId: null, at: 5 });
    expect(parseAnswered('x:1')).toBeNull();
  });
});
