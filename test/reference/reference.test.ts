// The reference suite: replays the reference tool's own captures, which are kept outside this
// repository, and holds our engine to the verdict its fixture table gives for each one.
// Folder: $TMA_REFERENCE_FIXTURES, else ../shared/fixtures next to the repository. A missing
// folder fails the suite; it never skips.

import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { fold } from '../../collector/core/fold.js';
import { loadManifestSet } from '../../collector/core/manifest-load.js';
import { evaluate } from '../../collector/core/rules.js';
import { DEFAULT_FOLD, type AgentManifest, type Evaluation, type StampedState, type State, type Verdict } from '../../collector/core/types.js';
import { bundledManifestDir, readManifestFiles } from '../../collector/manifest-files.js';
import { loadFixture, snapshotOf, type Fixture } from '../support/fixture-file.js';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const OWN_FIXTURES = join(REPO_ROOT, 'test', 'fixtures');
const FROM_ENV = process.env['TMA_REFERENCE_FIXTURES'];
const DIR = resolve(REPO_ROOT, FROM_ENV !== undefined && FROM_ENV !== '' ? FROM_ENV : '../shared/fixtures');

/** The loader self-test capture: not a rule fixture, only parsed. */
const SMOKE = '_harness_smoke.txt';

interface Expected {
  verdict: 'idle' | 'working' | 'blocked' | 'hold';
  detail?: string;
  /** Rules the table names as firing (rN, and +i for the co-rendering idle rule). */
  rules?: number[];
  /** The table says no idle claim may be made. */
  noIdleClaim?: true;
  /** The table says exactly one claim is made. */
  exactlyOneClaim?: true;
  /** The winning evidence, where the table names its source. */
  winner?: { label: string; provenance: 'title' | 'screen_rule' };
  /** The header's capture-time label, where the table says it differs from the verdict. */
  headerState?: State;
}

const blocked = (extra: Partial<Expected> = {}): Expected => ({ verdict: 'blocked', detail: 'permission', ...extra });

// The fixture table of the engine spec (§8), one entry per capture.
const TABLE: Record<string, Expected> = {
  'claude_blocked_permission_w100.txt': blocked({ rules: [0, 3] }),
  'claude_blocked_permission_w60.txt': blocked({ rules: [0, 3] }),
  'claude_blocked_trust_w60.txt': blocked({ rules: [0], headerState: 'unknown' }),
  'claude_history_model_picker.txt': { verdict: 'hold', rules: [1], headerState: 'unknown' },
  'claude_idle_bypass_modeline.txt': { verdict: 'idle', rules: [3, 4] },
  'claude_idle_completion.txt': { verdict: 'idle', rules: [3, 4], headerState: 'unknown' },
  'claude_idle_w60.txt': { verdict: 'idle', rules: [3, 4] },
  'claude_transcript_w60.txt': { verdict: 'hold', rules: [1], headerState: 'idle' },
  'claude_working_title.txt': { verdict: 'working', rules: [2, 4], winner: { label: 'claude r2', provenance: 'title' } },
  'codex_blocked_w60.txt': blocked({ rules: [0], noIdleClaim: true }),
  'codex_idle_w60.txt': { verdict: 'idle', rules: [3], exactlyOneClaim: true },
  'codex_working_w100.txt': { verdict: 'working', rules: [1, 2, 3] },
  'codex_working_w60.txt': { verdict: 'working', rules: [1, 2, 3] },
  'cursor_blocked_w100.txt': blocked({ rules: [0] }),
  'cursor_blocked_w60.txt': blocked({ rules: [0] }),
  'cursor_idle_post_turn_w100.txt': { verdict: 'idle', rules: [2] },
  'cursor_idle_post_turn_w60.txt': { verdict: 'idle', rules: [2] },
  'cursor_idle_w100.txt': { verdict: 'idle', rules: [2] },
  'cursor_idle_w60.txt': { verdict: 'idle', rules: [2] },
  'cursor_working_w60.txt': { verdict: 'working', rules: [1, 2] },
  'gemini_blocked_w60.txt': blocked({ rules: [0], noIdleClaim: true }),
  'gemini_idle_w100.txt': { verdict: 'idle', rules: [2] },
  'gemini_idle_w60.txt': { verdict: 'idle', rules: [2] },
  'gemini_working_w100.txt': { verdict: 'working', rules: [1, 2] },
  'gemini_working_w60.txt': { verdict: 'working', rules: [1, 2] },
  'opencode_blocked_edit_w60.txt': blocked({ rules: [0] }),
  'opencode_blocked_permission_w60.txt': blocked({ rules: [0] }),
  'opencode_idle_w100.txt': { verdict: 'idle', rules: [2] },
  'opencode_idle_w60.txt': { verdict: 'idle', rules: [2] },
  'opencode_working_w60.txt': { verdict: 'working', rules: [1, 2] },
  'pi_idle_w100.txt': { verdict: 'idle', rules: [1] },
  'pi_idle_w60.txt': { verdict: 'idle', rules: [1] },
  'pi_working_w60.txt': { verdict: 'working', rules: [0, 1] },
};

const MANIFESTS = loadManifestSet(readManifestFiles(bundledManifestDir()), []).manifests;

function manifestOf(agent: string): AgentManifest {
  const m = MANIFESTS.find((x) => x.name === agent);
  if (m === undefined) throw new Error(`no bundled manifest named ${agent}`);
  return m;
}

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

/** Unknown pane height, foreground = agent, not scrolled, folded at captured_at + 10. */
function replay(fx: Fixture, prev: StampedState | null = null): { evaluation: Evaluation; verdict: Verdict; now: number } {
  const m = manifestOf(fx.agent);
  const snap = snapshotOf(fx);
  const evaluation = evaluate(m, snap);
  const now = snap.capturedAt + 10;
  const facts = { pid: fx.pid, foregroundIsAgent: true, scrolled: false, historyView: evaluation.historyView };
  return { evaluation, verdict: fold(prev, facts, evaluation.evidence, m, DEFAULT_FOLD, now), now };
}

function claimedStates(ev: Evaluation): State[] {
  return ev.evidence.flatMap((e) => (e.claim.kind === 'state' ? [e.claim.state] : []));
}

const folderExists = existsSync(DIR) && statSync(DIR).isDirectory();

if (!folderExists) {
  describe('reference captures', () => {
    it(`are readable from ${DIR}`, () => {
      throw new Error(`reference captures folder not found: ${DIR} ` + '(set TMA_REFERENCE_FIXTURES to the folder holding the reference *.txt captures)');
    });
  });
} else {
  const captures = readdirSync(DIR)
    .filter((n) => n.endsWith('.txt'))
    .sort();
  const rulesCaptures = captures.filter((n) => n !== SMOKE);

  describe(`reference captures in ${DIR}`, () => {
    it('every capture has an expectation, and every expectation a capture', () => {
      const unexpected = rulesCaptures.filter((n) => !(n in TABLE));
      expect(unexpected, `captures without an expected verdict: ${unexpected.join(', ')}`).toEqual([]);
      const missing = Object.keys(TABLE).filter((n) => !captures.includes(n));
      expect(missing, `expected captures not in the folder: ${missing.join(', ')}`).toEqual([]);
      expect(captures, `${SMOKE} is missing`).toContain(SMOKE);
    });

    it(`${SMOKE} parses (loader self-test only)`, () => {
      const fx = loadFixture(join(DIR, SMOKE));
      expect(fx.agent).not.toBe('');
      expect(fx.capturedAt).toBeGreaterThan(0);
      expect(fx.screen.length).toBeGreaterThan(0);
    });

    it('none of our own fixtures is a copy of a capture', () => {
      const theirs = new Map(rulesCaptures.map((n) => [loadFixture(join(DIR, n)).screen, n]));
      const ours = readdirSync(OWN_FIXTURES).filter((n) => n.endsWith('.txt'));
      for (const n of ours) {
        expect(n).not.toMatch(/_w\d+\.txt$/);
        expect(theirs.get(loadFixture(join(OWN_FIXTURES, n)).screen), n).toBeUndefined();
      }
    });

    describe.each(rulesCaptures.filter((n) => n in TABLE))('%s', (name) => {
      const fx = loadFixture(join(DIR, name));
      const want = TABLE[name] as Expected;

      it('has the header state the table implies', () => {
        expect(fx.state).toBe(want.headerState ?? (want.verdict === 'hold' ? 'unknown' : want.verdict));
      });

      it('fires the rules the table names', () => {
        const { evaluation } = replay(fx);
        const on = evaluation.matches.filter((r) => r.matched).map((r) => r.index);
        for (const i of want.rules ?? []) expect(on, `r${i}`).toContain(i);
        if (want.noIdleClaim) expect(claimedStates(evaluation)).not.toContain('idle');
        if (want.exactlyOneClaim) expect(evaluation.evidence).toHaveLength(1);
      });

      if (want.verdict === 'hold') {
        it('is a history view: first-sight unknown with no prior', () => {
          const { evaluation, verdict, now } = replay(fx);
          expect(evaluation.historyView).toBe(true);
          expect(verdict.action).toBe('publish');
          expect(verdict.state).toBe('unknown');
          expect(verdict.detail).toBeNull();
          expect(verdict.winning).toMatchObject({ source: 'capture', at: now });
          expect(verdict.mayOverride).toBe(false);
          expect(verdict.setAttention).toBe(false);
        });

        it('holds a prior stamp as it was, never blocked', () => {
          for (const state of ['idle', 'working'] as const) {
            const { verdict } = replay(fx, stamp(state, fx.capturedAt - 60_000, fx.pid));
            expect(verdict.action).toBe('hold');
            expect(verdict.state).toBe(state);
          }
        });
      } else {
        it(`is ${want.verdict}${want.detail ? '/' + want.detail : ''} with no prior`, () => {
          const { evaluation, verdict } = replay(fx);
          expect(evaluation.historyView).toBe(false);
          expect(verdict.action).toBe('publish');
          expect(verdict.state).toBe(want.verdict);
          expect(verdict.detail).toBe(want.detail ?? null);
          expect(verdict.winning.source).toBe('capture');
          expect(verdict.winning.at).toBe(fx.capturedAt);
          if (want.winner) {
            expect(verdict.winning.label).toBe(want.winner.label);
            const won = evaluation.evidence.find((e) => e.label === want.winner?.label);
            expect(won?.provenance).toBe(want.winner.provenance);
          }
        });
      }
    });
  });
}
