// The local twin of fleet-terminal-hostile: a real scratch tmux server whose panes carry hostile
// text — a session name with bidi overrides, a repository folder and branch named with escapes, a
// dialog whose command line holds controls, pane options written straight with set-option — and
// every local verb that prints a pane's fields: no byte a terminal would act on reaches stdout or
// stderr, and the hostile fields do show (escaped), so a verb that printed nothing would not pass.

import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVIL, EVIL_RAW_PARTS, onTerminal, RAW, verbsCovered } from '../support/hostile-text.js';
import { FIXTURES, ScratchTmux, tma, type CliResult } from '../support/scratch-tmux.js';

// tmux itself shows C0 in a session name as octal; bidi overrides and isolates pass through.
const SESSION = 's\u202egnp.exe\u2066x';
// A folder name may hold any byte but '/'.
const REPO_DIR = `r${EVIL}`;
// git refuses ASCII controls in a ref name, not C1 or bidi characters.
const BRANCH = 'b\u009b31m\u202ex';

let t: ScratchTmux;
let pane: string;
let env: NodeJS.ProcessEnv;

function hostileDialog(): string {
  const text = readFileSync(join(FIXTURES, 'claude-permission-dialog.txt'), 'utf8');
  // What the dialog asks, painted with characters tmux keeps: C1 as UTF-8 and bidi overrides.
  return text.replace('rm -rf build/.cache', 'rm -rf \u202e\u009b31m\u2066evil\u2069');
}

beforeAll(async () => {
  t = new ScratchTmux('hostile');
  const repo = join(t.dir, REPO_DIR);
  mkdirSync(repo);
  const git = (...a: string[]) => execFileSync('git', ['-C', repo, ...a], { timeout: 5000, stdio: 'ignore' });
  git('init', '-q', '-b', BRANCH);
  writeFileSync(join(t.dir, 'dialog.txt'), hostileDialog());
  writeFileSync(join(t.dir, 'config.toml'), '[fold]\nfreshness_secs = 0\n');
  writeFileSync(
    join(t.dir, 'hub.toml'),
    `[[client]]\nname = "phone${EVIL.replace(/[\u0000-\u001f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)}"\nrole = "viewer"\ntoken_file = "${join(t.dir, 'c.token')}"\n`,
  );
  writeFileSync(join(t.dir, 'c.token'), 'x'.repeat(40), { mode: 0o600 });
  env = { TMA_CONFIG: join(t.dir, 'config.toml'), TMA_HUB: '', TMA_HUB_TOKEN: '', TMA_LOG_LEVEL: '', TMA_DEBUG: '' };
  t.tmux('new-session', '-d', '-s', SESSION, '-c', repo, '-x', '80', '-y', '24', `bash --rcfile ${join(t.dir, 'rc')} --noprofile -i`);
  pane = t.tmux('list-panes', '-a', '-F', '#{pane_id}').trim();
  await t.standIn(pane, 'claude', join(t.dir, 'dialog.txt'));
  // Options a hook or another tool could have written: the engine reads them back as row fields.
  for (const [k, v] of [
    ['@agent_model', `m${EVIL}`],
    ['@agent_session', `sess${EVIL}`],
    ['@agent_summary', `sum${EVIL}`],
    ['@agent_session_summary', `ss${EVIL}`],
  ])
    t.tmux('set-option', '-p', '-t', pane, k!, v!);
  const first = await run(['ls', '--json']);
  expect(first.stdout, first.stderr).toContain('"blocked"');
}, 60_000);

afterAll(() => t?.kill());

const run = (args: string[], timeoutMs?: number): Promise<CliResult> => tma(['-L', t.name, ...args], { env, timeoutMs });

interface Case {
  args: string[];
  /** The hostile fields this form prints: the output shows them escaped (false: counts only, or an error). */
  shows: boolean;
  timeoutMs?: number;
}

const CASES: Case[] = [
  { args: ['ls'], shows: true },
  { args: ['ls', '--tsv'], shows: true },
  { args: ['ls', '--json'], shows: true },
  { args: ['status', '--format', 'plain'], shows: false },
  { args: ['status', '--format', 'json'], shows: false },
  { args: ['status', '--format', 'prom'], shows: false },
  { args: ['wait', '--until', 'blocked', '--any', '--timeout', '5'], shows: true },
  { args: ['wait', '--until', 'blocked', '--any', '--timeout', '5', '--json'], shows: true },
  { args: ['wait', '--until', 'idle', '--all', '--timeout', '1'], shows: false },
  { args: ['subscribe', '--interval', '1'], shows: true, timeoutMs: 4000 },
  { args: ['subscribe', '--json', '--interval', '1'], shows: true, timeoutMs: 4000 },
  { args: ['doctor'], shows: true },
  { args: ['doctor', '--json'], shows: true },
  { args: ['act', '--list'], shows: false },
  { args: ['act', '--list', '--json'], shows: false },
  { args: ['act', 'approve', '--state', 'blocked', '--dry-run'], shows: true },
  { args: ['act', 'approve', '--state', 'blocked', '--dry-run', '--json'], shows: true },
  { args: ['act', 'approve', '--state', 'blocked', '--all', '--dry-run'], shows: false },
  { args: ['act', '--menu', '--pane', '%PANE'], shows: false },
  { args: ['mute', '--state', 'blocked', '--for', '1m'], shows: false },
  { args: ['mute', '--state', 'blocked', '--clear'], shows: false },
  { args: ['jump', '--blocked'], shows: false },
  { args: ['debug', 'transitions'], shows: false },
  { args: ['hub', 'clients'], shows: true },
  { args: ['hub', 'clients', '--json'], shows: true },
];

const withPane = (args: string[]) => args.map((a) => (a === '%PANE' ? pane : a));
const hubConfig = (args: string[]) => (args[0] === 'hub' ? ['--config', join(t.dir, 'hub.toml'), ...args] : args);

describe('local verbs: hostile pane text never reaches a terminal raw', () => {
  it('every verb the coverage table names for local has a case here', () => {
    const here = new Set([...CASES.map((c) => c.args[0]), 'watch', 'pick']);
    expect(verbsCovered('local').filter((v) => !here.has(v))).toEqual([]);
  });

  for (const c of CASES)
    it(`tma ${c.args.join(' ')}`, async () => {
      const r = await run(hubConfig(withPane(c.args)), c.timeoutMs);
      expect(r.stdout.length + r.stderr.length, 'it printed something').toBeGreaterThan(0);
      expect(RAW.exec(r.stdout), JSON.stringify(r.stdout)).toBeNull();
      expect(RAW.exec(r.stderr), JSON.stringify(r.stderr)).toBeNull();
      if (c.shows) expect(r.stdout, 'the hostile fields are shown, escaped').toMatch(/\\(x1b|x9b|u202e|u009b|u2066)/);
      if (c.args.includes('--json')) for (const l of r.stdout.trim().split('\n')) expect(() => JSON.parse(l), l).not.toThrow();
    });

  // A view paints its own escapes: what must not arrive is any piece of a hostile field, raw.
  for (const v of [['watch'], ['watch', '--table'], ['pick'], ['act', '--menu', '--pane', '%PANE']])
    it(`tma ${v.join(' ')} on a terminal`, async () => {
      const r = await onTerminal(['-L', t.name, ...withPane(v)], env, 5);
      expect(r.stdout, 'the view painted the hostile row, escaped').toMatch(/\\u202e|\\x1b/);
      for (const part of EVIL_RAW_PARTS) expect(r.stdout.includes(part), JSON.stringify(part)).toBe(false);
    });
});
