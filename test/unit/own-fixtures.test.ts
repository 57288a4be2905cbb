// Our own fixture screens (test/fixtures/*.txt) through the rule engine and the fold, the
// boundaries of every rule window, and the cases of the reference fixture suite we port.

import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { stripAnsi } from '../../collector/core/ansi.js';
import { fold } from '../../collector/core/fold.js';
import { loadManifestSet } from '../../collector/core/manifest-load.js';
import { rustLines } from '../../collector/core/regions.js';
import { evaluate } from '../../collector/core/rules.js';
import { DEFAULT_FOLD, type AgentManifest, type Evaluation, type StampedState, type State, type Verdict } from '../../collector/core/types.js';
import { bundledManifestDir, readManifestFiles } from '../../collector/manifest-files.js';
import { EXPECTATIONS, STAND_INS, type FixtureExpectation } from '../fixtures/expectations.js';
import { loadFixture, snapshotOf, type Fixture } from '../support/fixture-file.js';

const DIR = fileURLToPath(new URL('../fixtures/', import.meta.url));
const FILES = readdirSync(DIR)
  .filter((n) => n.endsWith('.txt'))
  .sort();
const MANIFESTS = loadManifestSet(readManifestFiles(bundledManifestDir()), []).manifests;
const AGENTS = MANIFESTS.map((m) => m.name);

function manifestOf(agent: string): AgentManifest {
  const m = MANIFESTS.find((x) => x.name === agent);
  if (m === undefined) throw new Error(`no bundled manifest named ${agent}`);
  return m;
}

function fixture(name: string): Fixture {
  return loadFixture(join(DIR, name));
}

function expectationOf(name: string): FixtureExpectation {
  const e = EXPECTATIONS[name];
  if (e === undefined) throw new Error(`no expectation for ${name}`);
  return e;
}

/** A prior stamp as a capture-sourced publish at `at` would have left it. */
function stamp(state: State, at: number, pid: number): StampedState {
  return {
    state,
    detail: null,
    source: 'capture',
    evidenceAt: at,
    since: at,
    stampedAt: at,
    attention: false,
    notifiedAt: null,
    turnAt: at,
    hash: null,
    pid,
    session: null,
    subagents: [],
  };
}

interface Run {
  evaluation: Evaluation;
  verdict: Verdict;
  now: number;
}

/** One poll over a screen: the capture is taken `offsetMs` after the header's time, folded 10 ms later. */
function runScreen(fx: Fixture, opts: { visibleHeight?: number | undefined; prev?: StampedState | null; offsetMs?: number; screen?: string } = {}): Run {
  const m = manifestOf(fx.agent);
  const snap = snapshotOf({ ...fx, screen: opts.screen ?? fx.screen }, { visibleHeight: opts.visibleHeight ?? null, offsetMs: opts.offsetMs ?? 0 });
  const evaluation = evaluate(m, snap);
  const now = snap.capturedAt + 10;
  const facts = { pid: fx.pid, foregroundIsAgent: true, scrolled: false, historyView: evaluation.historyView };
  return { evaluation, verdict: fold(opts.prev ?? null, facts, evaluation.evidence, m, DEFAULT_FOLD, now), now };
}

function fired(ev: Evaluation): number[] {
  return ev.matches.filter((r) => r.matched).map((r) => r.index);
}

function ruleFires(fx: Fixture, index: number, opts: { screen?: string; visibleHeight?: number } = {}): boolean {
  const { evaluation } = runScreen(fx, opts);
  const report = evaluation.matches.find((r) => r.index === index);
  if (report === undefined) throw new Error(`${fx.agent} has no rule r${index}`);
  return report.matched;
}

/** The first-sight publish a fold makes when it must hold but has nothing to echo. */
function expectFirstSight(run: Run): void {
  expect(run.verdict.action).toBe('publish');
  expect(run.verdict.state).toBe('unknown');
  expect(run.verdict.detail).toBeNull();
  expect(run.verdict.winning.source).toBe('capture');
  expect(run.verdict.winning.at).toBe(run.now);
  expect(run.verdict.mayOverride).toBe(false);
  expect(run.verdict.setAttention).toBe(false);
}

describe('own fixture inventory', () => {
  it('has files, and every file has an expectation and every expectation a file', () => {
    expect(FILES.length).toBeGreaterThan(0);
    expect(FILES.filter((f) => !(f in EXPECTATIONS))).toEqual([]);
    expect(Object.keys(EXPECTATIONS).filter((f) => !FILES.includes(f))).toEqual([]);
  });

  it('names each file <agent>-<what>.txt, never like a reference capture', () => {
    for (const f of FILES) {
      expect(f).toMatch(/^[a-z]+-[a-z0-9-]+\.txt$/);
      expect(f).not.toMatch(/_w\d+\.txt$/);
      expect(f.slice(0, f.indexOf('-'))).toBe(fixture(f).agent);
    }
  });

  it('records the expected state in each header (hold reads as unknown)', () => {
    for (const f of FILES) {
      const { verdict } = expectationOf(f);
      expect(fixture(f).state, f).toBe(verdict === 'hold' ? 'unknown' : verdict);
    }
  });

  it('runs each screen under one of the process names its manifest knows', () => {
    for (const f of FILES) {
      const fx = fixture(f);
      expect(manifestOf(fx.agent).identity.processNames, f).toContain(fx.command);
    }
  });

  it('classifies every rule of the manifest on every screen, once', () => {
    for (const f of FILES) {
      const e = expectationOf(f);
      const listed = [...(e.rules ?? []), ...(e.notRules ?? [])].sort((a, b) => a - b);
      expect(listed, f).toEqual(manifestOf(fixture(f).agent).rules.map((r) => r.index));
    }
  });

  it('covers every rule of every bundled manifest both firing and not firing', () => {
    const fires = new Set<string>();
    const quiet = new Set<string>();
    for (const f of FILES) {
      const agent = fixture(f).agent;
      const e = expectationOf(f);
      for (const i of e.rules ?? []) fires.add(`${agent} r${i}`);
      for (const i of e.notRules ?? []) quiet.add(`${agent} r${i}`);
    }
    const all = MANIFESTS.flatMap((m) => m.rules.map((r) => `${m.name} r${r.index}`));
    expect(all.length).toBeGreaterThan(0);
    expect(all.filter((k) => !fires.has(k))).toEqual([]);
    expect(all.filter((k) => !quiet.has(k))).toEqual([]);
  });
});

describe('own fixtures: rules and verdict with no prior', () => {
  it.each(FILES)('%s', (f) => {
    const fx = fixture(f);
    const e = expectationOf(f);
    const run = runScreen(fx, { visibleHeight: e.visibleHeight });
    const on = fired(run.evaluation);
    for (const i of e.rules ?? []) expect(on, `r${i} must fire`).toContain(i);
    for (const i of e.notRules ?? []) expect(on, `r${i} must not fire`).not.toContain(i);

    if (e.verdict === 'hold') {
      expect(run.evaluation.historyView).toBe(true);
      expectFirstSight(run);
      return;
    }
    expect(run.evaluation.historyView).toBe(false);
    expect(run.verdict.action).toBe('publish');
    expect(run.verdict.state).toBe(e.verdict);
    expect(run.verdict.detail).toBe(e.detail ?? null);
    expect(run.verdict.winning.source).toBe('capture');
    expect(run.verdict.winning.at).toBe(fx.capturedAt);
    // No prior stamp: nothing was working, so neither idle nor working raises; blocked does.
    expect(run.verdict.setAttention).toBe(e.verdict === 'blocked');
  });
});

describe('own fixtures: history views hold a prior stamp', () => {
  const holds = FILES.filter((f) => expectationOf(f).verdict === 'hold');
  it('has at least one', () => expect(holds.length).toBeGreaterThan(0));
  it.each(holds)('%s keeps an idle and a working stamp as they were', (f) => {
    const fx = fixture(f);
    for (const state of ['idle', 'working'] as const) {
      const prev = stamp(state, fx.capturedAt - 60_000, fx.pid);
      const { verdict } = runScreen(fx, { prev, visibleHeight: expectationOf(f).visibleHeight });
      expect(verdict.action).toBe('hold');
      expect(verdict.state).toBe(state);
      expect(verdict.setAttention).toBe(false);
    }
  });
});

describe('stand-in screens for the integration tests', () => {
  it('name an idle, a working and (except pi) a blocked screen for each bundled agent', () => {
    expect(Object.keys(STAND_INS).sort()).toEqual([...AGENTS].sort());
    for (const agent of AGENTS) {
      const s = STAND_INS[agent];
      expect(s, agent).toBeDefined();
      if (s === undefined) continue;
      const roles: [string, string | undefined][] = [
        ['idle', s.idle],
        ['working', s.working],
        ['blocked', s.blocked],
      ];
      for (const [role, file] of roles) {
        if (agent === 'pi' && role === 'blocked') {
          expect(file).toBeUndefined();
          continue;
        }
        expect(file, `${agent} ${role}`).toBeDefined();
        if (file === undefined) continue;
        expect(fixture(file).agent).toBe(agent);
        const e = expectationOf(file);
        expect(e.verdict).toBe(role);
        expect(e.visibleHeight).toBeUndefined();
      }
    }
  });

  const standIns = Object.values(STAND_INS).flatMap((s) => [s.idle, s.working, ...(s.blocked ? [s.blocked] : [])]);
  it.each(standIns)('%s fits an 80x24 pane and its title passes identity', (f) => {
    const fx = fixture(f);
    const rows = rustLines(fx.screen);
    expect(rows.length).toBe(24);
    for (const row of rows) expect([...stripAnsi(row)].length, JSON.stringify(stripAnsi(row))).toBeLessThanOrEqual(80);
    const patterns = manifestOf(fx.agent).identity.titlePatterns;
    if (patterns.length > 0)
      expect(
        patterns.some((re) => re.test(stripAnsi(fx.title))),
        fx.title,
      ).toBe(true);
  });

  it('gemini, cursor and pi titles name the agent the way identity expects', () => {
    expect(fixture('gemini-idle.txt').title).toMatch(/^◇ {2}Ready \(/);
    expect(fixture('gemini-working.txt').title).toMatch(/^✦ {2}Working… \(/);
    expect(fixture('gemini-approval-dialog.txt').title).toMatch(/^✋ {2}Action Required \(/);
    for (const f of ['cursor-idle.txt', 'cursor-working.txt', 'cursor-approval-dialog.txt']) expect(fixture(f).title).toBe('Cursor Agent');
    for (const f of ['pi-idle.txt', 'pi-working.txt']) expect(fixture(f).title).toMatch(/^π - /);
  });
});

// Painted rows appended under a screen push its anchor rows up, one row per row (blank rows would
// not: tail windows count from the last painted row).
function padBottom(screen: string, rows: number): string {
  return screen + 'filler row\n'.repeat(rows);
}

// row = how far from the bottom the topmost row the rule needs sits in the unpadded screen.
const TAIL_CASES: { file: string; rule: number; window: number; row: number }[] = [
  { file: 'claude-permission-dialog.txt', rule: 0, window: 30, row: 5 },
  { file: 'claude-model-picker.txt', rule: 1, window: 30, row: 1 },
  { file: 'claude-idle.txt', rule: 4, window: 6, row: 1 },
  { file: 'codex-approval-dialog.txt', rule: 0, window: 24, row: 11 },
  { file: 'codex-working.txt', rule: 2, window: 20, row: 5 },
  { file: 'codex-idle.txt', rule: 3, window: 6, row: 3 },
  { file: 'opencode-permission-dialog.txt', rule: 0, window: 24, row: 10 },
  { file: 'gemini-idle.txt', rule: 2, window: 8, row: 2 },
];

describe('tail windows: the anchor row exactly at, just inside and just outside the window', () => {
  it('lists the window each manifest gives the rule', () => {
    for (const c of TAIL_CASES) {
      const region = manifestOf(fixture(c.file).agent).rules[c.rule]?.region;
      expect(region, `${c.file} r${c.rule}`).toEqual({ kind: 'tail_lines', n: c.window });
    }
  });

  for (const { file, rule, window, row } of TAIL_CASES) {
    it(`${file} r${rule}: tail_lines(${window}), anchor ${row} rows up`, () => {
      const fx = fixture(file);
      const at = (anchorRow: number) => ruleFires(fx, rule, { screen: padBottom(fx.screen, anchorRow - row) });
      expect(at(row)).toBe(true);
      expect(at(window - 1)).toBe(true);
      expect(at(window)).toBe(true);
      expect(at(window + 1)).toBe(false);
    });
  }
});

describe('tall panes: blank rows below an inline UI that has not filled the pane', () => {
  // tmux prints every row of the pane, so a fresh session on a 70-row pane ends in dozens of empty
  // rows (some carrying only an SGR reset or spaces); the windows count from the last painted row.
  const blankRows = (n: number) => '\n'.repeat(n - 3) + '\x1b[0m\n' + '   \n' + '\x1b[49m  \x1b[0m\n';

  for (const { file, rule, window } of TAIL_CASES) {
    it(`${file} r${rule}: tail_lines(${window}) still sees its anchor under ${window + 40} blank rows`, () => {
      const fx = fixture(file);
      expect(ruleFires(fx, rule, { screen: fx.screen + blankRows(window + 40) })).toBe(true);
    });
  }

  it("Claude's permission dialog on a 70-row pane is blocked, not the title's idle", () => {
    const fx = fixture('claude-permission-dialog.txt');
    const run = runScreen(fx, { screen: fx.screen + blankRows(45), visibleHeight: 70 });
    expect(run.verdict.state).toBe('blocked');
    expect(run.verdict.detail).toBe('permission');
  });

  it("Gemini's idle screen on a fresh 40-row pane is idle, not unknown", () => {
    const fx = fixture('gemini-idle.txt');
    const run = runScreen(fx, { screen: fx.screen + blankRows(20), visibleHeight: 40 });
    expect(run.verdict.state).toBe('idle');
  });

  it('blank rows in the middle of the screen still count toward the window', () => {
    const fx = fixture('gemini-idle.txt');
    const lines = rustLines(fx.screen);
    // Two blank rows inserted just above the footer push the composer edge (2 rows up) to 4 up.
    const spread = [...lines.slice(0, -1), '', '', ...lines.slice(-1)].join('\n') + '\n';
    expect(ruleFires(fx, 2, { screen: spread + 'filler row\n'.repeat(4) })).toBe(true);
    expect(ruleFires(fx, 2, { screen: spread + 'filler row\n'.repeat(5) })).toBe(false);
  });
});

describe('visible region: an old dialog above the pane height', () => {
  // row = how far from the bottom the dialog's topmost needed row sits.
  const cases = [
    { file: 'cursor-scrollback-old-dialog.txt', height: 12, row: 16 },
    { file: 'gemini-scrollback-old-dialog.txt', height: 10, row: 17 },
  ];

  it.each(cases)('$file: height $height does not block, the whole capture would', ({ file, height }) => {
    const fx = fixture(file);
    const clipped = runScreen(fx, { visibleHeight: height });
    expect(clipped.evaluation.evidence.some((ev) => ev.claim.kind === 'state' && ev.claim.state === 'blocked')).toBe(false);
    expect(clipped.verdict.state).toBe('idle');
    const whole = runScreen(fx);
    expect(whole.verdict.state).toBe('blocked');
  });

  it.each(cases)('$file: the dialog counts from a height of exactly $row rows', ({ file, row }) => {
    const fx = fixture(file);
    expect(ruleFires(fx, 0, { visibleHeight: row - 1 })).toBe(false);
    expect(ruleFires(fx, 0, { visibleHeight: row })).toBe(true);
    expect(ruleFires(fx, 0, { visibleHeight: row + 1 })).toBe(true);
  });

  it('a pane height of 0 means unknown: the whole capture counts', () => {
    expect(ruleFires(fixture('cursor-scrollback-old-dialog.txt'), 0, { visibleHeight: 0 })).toBe(true);
  });
});

describe('repeat counts of drawn edges', () => {
  const cases = [
    { file: 'cursor-idle.txt', rule: 2, glyph: '▄', min: 10 },
    { file: 'gemini-idle.txt', rule: 2, glyph: '▀', min: 10 },
    { file: 'pi-idle.txt', rule: 1, glyph: '─', min: 20 },
  ];
  it.each(cases)('$file needs at least $min × $glyph', ({ file, rule, glyph, min }) => {
    const fx = fixture(file);
    const run = new RegExp(`${glyph}{${min},}`, 'gu');
    expect(fx.screen).toMatch(new RegExp(`${glyph}{${min},}`, 'u'));
    const edge = (n: number) => fx.screen.replace(run, glyph.repeat(n));
    expect(ruleFires(fx, rule, { screen: edge(min - 1) })).toBe(false);
    expect(ruleFires(fx, rule, { screen: edge(min) })).toBe(true);
    expect(ruleFires(fx, rule, { screen: edge(min + 1) })).toBe(true);
  });

  it('pi r1 wants the rule at column 0', () => {
    const fx = fixture('pi-idle.txt');
    expect(ruleFires(fx, 1, { screen: fx.screen.replace(/^(\x1b\[[0-9;]*m)(─+)$/gmu, '$1 $2') })).toBe(false);
  });
});

describe('ported: claude prose that reads like a dialog', () => {
  const fx = fixture('claude-prose-quotes-prompt.txt');
  const text = stripAnsi(fx.screen);

  it('holds the shapes the case is about', () => {
    expect(text).toMatch(/Do you want to keep .*\?/);
    expect(text).toMatch(/^\s*1\. Yes, inline it/m);
    expect(text).toContain('✻ Sautéed for 5m 34s');
    expect(text).toContain('⏵⏵');
    expect(text).toContain('"❯ 1. Yes"');
  });

  it('claims no blocked state and is idle through the mode line alone', () => {
    const run = runScreen(fx);
    const claims = run.evaluation.evidence.map((ev) => (ev.claim.kind === 'state' ? ev.claim.state : ev.claim.phase));
    expect(claims).toEqual(['idle']);
    expect(run.verdict.state).toBe('idle');
    expect(run.verdict.winning.label).toBe('claude r4');
  });

  it('would block if the quoted option stood at the start of its row', () => {
    const live = fx.screen.replace('  1. Yes, inline it', '❯ 1. Yes, inline it');
    expect(runScreen(fx, { screen: live }).verdict.state).toBe('blocked');
  });
});

describe('ported: dwell after a working stamp', () => {
  const idles = FILES.filter((f) => expectationOf(f).verdict === 'idle');
  it('has idle screens', () => expect(idles.length).toBeGreaterThan(0));

  // The prior working claim is as old as the capture offset; the dwell keeps it up to 3000 ms.
  it.each(idles)('%s', (f) => {
    const fx = fixture(f);
    const e = expectationOf(f);
    const at = (offsetMs: number) => {
      const prev = stamp('working', fx.capturedAt + 10, fx.pid);
      return runScreen(fx, { prev, offsetMs, visibleHeight: e.visibleHeight }).verdict;
    };
    for (const held of [at(1000), at(2999), at(3000)]) {
      expect(held.action).toBe('hold');
      expect(held.state).toBe('working');
    }
    for (const moved of [at(3001), at(10_000)]) {
      expect(moved.action).toBe('publish');
      expect(moved.state).toBe('idle');
      expect(moved.setAttention).toBe(true);
    }
  });
});
