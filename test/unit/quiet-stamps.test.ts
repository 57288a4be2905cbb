import { describe, expect, it } from 'vitest';
import { LookBook, NOT_AGENT_SWEEP_MS, SWEEP_MS, waitsOnClock } from '../../collector/engine/look-book.js';
import type { PaneRecord } from '../../collector/engine/pane-list.js';
import { changesNothing, planFromVerdict, projectStamp } from '../../collector/core/stamp-plan.js';
import { renderPlan } from '../../collector/core/stamp-render.js';
import { fold } from '../../collector/core/fold.js';
import { DEFAULT_FOLD, type Evidence, type Facts, type StampedState, type State, type Verdict } from '../../collector/core/types.js';

const NOW = 1_700_000_100_000;
const opts = { now: NOW, name: 'claude', storedName: 'claude', renewHookMs: 30_000 };

function stamp(over: Partial<StampedState> = {}): StampedState {
  return {
    state: 'working',
    detail: null,
    source: 'capture',
    evidenceAt: NOW - 10_000,
    since: NOW - 20_000,
    stampedAt: NOW - 9_000,
    attention: false,
    notifiedAt: null,
    turnAt: 0,
    hash: 9n,
    pid: 100,
    session: null,
    subagents: [],
    ...over,
  };
}

function verdict(prev: StampedState, over: Partial<Verdict> = {}): Verdict {
  return {
    state: prev.state,
    detail: prev.detail,
    winning: { source: 'capture', at: NOW, label: 'screen' },
    action: 'publish',
    mayOverride: false,
    setAttention: false,
    episodeReset: false,
    corroborates: false,
    prev,
    reason: 'test',
    ...over,
  };
}

/** The cycle's own sequence: verdict → plan → projection → is there anything to write? */
function wouldWrite(prev: StampedState, v: Verdict, hash = prev.hash, o = opts): string[][] {
  const plan = planFromVerdict(v, { pid: 100, name: 'claude', hash, now: NOW });
  const next = projectStamp(prev, plan, { guarded: true });
  return changesNothing(prev, next, o) ? [] : renderPlan('%1', plan, { guarded: true, prev });
}

describe('changesNothing: a look that would store what is already stored writes nothing', () => {
  it('a static screen re-read as the same verdict sends no argv at all', () => {
    const prev = stamp();
    expect(wouldWrite(prev, verdict(prev))).toEqual([]);
  });

  it('a hold over the same screen writes nothing; over a new screen it writes hash and stamp', () => {
    const prev = stamp();
    expect(wouldWrite(prev, verdict(prev, { action: 'hold' }))).toEqual([]);
    expect(wouldWrite(prev, verdict(prev, { action: 'hold' }), 10n)).toEqual([
      ['set-option', '-p', '-t', '%1', '@agent_hash', '10'],
      ['set-option', '-p', '-t', '%1', '@agent_stamped_at', String(NOW)],
    ]);
  });

  it('anything a reader uses that moves is written in full', () => {
    const prev = stamp();
    const full = (cmds: string[][]) => cmds.map((c) => c[c.indexOf('-t') + 2]).at(-1);
    expect(full(wouldWrite(prev, verdict(prev, { state: 'idle' })))).toBe('@agent_stamped_at');
    expect(full(wouldWrite(prev, verdict(prev, { detail: 'Bash' })))).toBe('@agent_stamped_at');
    expect(full(wouldWrite(prev, verdict(prev, { setAttention: true, state: 'blocked' })))).toBe('@agent_stamped_at');
    expect(wouldWrite(prev, verdict(prev), 10n).length).toBeGreaterThan(0);
    // An episode reset (a new agent process) is never skipped.
    expect(wouldWrite(prev, verdict(prev, { episodeReset: true })).length).toBeGreaterThan(0);
    // A stored name that differs from the agent's is corrected.
    expect(wouldWrite(prev, verdict(prev), prev.hash, { ...opts, storedName: 'codex' }).length).toBeGreaterThan(0);
  });

  it('a corroborated hook claim is renewed only once its evidence is old enough to start decaying', () => {
    const young = stamp({ source: 'hook', evidenceAt: NOW - 5_000, stampedAt: NOW - 4_000 });
    const corroborate = (p: StampedState) => verdict(p, { winning: { source: 'hook', at: NOW, label: 'screen agrees' }, corroborates: true });
    expect(wouldWrite(young, corroborate(young))).toEqual([]);
    const old = stamp({ source: 'hook', evidenceAt: NOW - 30_000 });
    const cmds = wouldWrite(old, corroborate(old));
    expect(cmds.some((c) => c.includes('@agent_evidence_at'))).toBe(true);
  });

  it('a half-written, future or clock-stepped stamp is always rewritten', () => {
    const half = stamp({ stampedAt: NOW - 11_000 }); // older than its evidence: a chain cut short
    expect(wouldWrite(half, verdict(half)).length).toBeGreaterThan(0);
    const future = stamp({ stampedAt: NOW + 5_000, evidenceAt: NOW - 10_000 });
    expect(wouldWrite(future, verdict(future)).length).toBeGreaterThan(0);
  });

  it('no previous stamp, or one that projects to nothing, is never "unchanged"', () => {
    expect(changesNothing(null, stamp(), opts)).toBe(false);
    expect(changesNothing(stamp(), null, opts)).toBe(false);
  });
});

function rec(over: Partial<PaneRecord> = {}): PaneRecord {
  return {
    paneId: '%1',
    panePid: 10,
    sessionName: 's',
    windowIndex: 0,
    paneIndex: 0,
    currentCommand: 'claude',
    windowActivity: 1,
    alternateOn: false,
    scrollPosition: null,
    height: 24,
    currentPath: '/',
    options: { '@agent_state': 'working' },
    windowSummary: 'working:1',
    sessionSummary: 'working:1',
    title: 't',
    ...over,
  };
}

describe('LookBook: which panes a watched engine may leave alone', () => {
  it('a pane never looked at is looked at', () => {
    expect(new LookBook({ pendingMs: 3000 }).quiet(rec(), NOW)).toBe(false);
  });

  it('after a look, the next listing is the reference; output-only and rollup moves do not count', () => {
    const b = new LookBook({ pendingMs: 3000 });
    b.looked('%1', NOW, false);
    expect(b.quiet(rec(), NOW + 1000)).toBe(true);
    expect(b.quiet(rec({ windowActivity: 99, windowSummary: 'idle:1', sessionSummary: '' }), NOW + 2000)).toBe(true);
  });

  it('a moved listing (options by a second writer, the foreground command, the title) ends the quiet', () => {
    const b = new LookBook({ pendingMs: 3000 });
    b.looked('%1', NOW, false);
    expect(b.quiet(rec(), NOW + 1)).toBe(true);
    expect(b.quiet(rec({ options: { '@agent_state': 'blocked' } }), NOW + 2)).toBe(false);
    expect(b.quiet(rec({ currentCommand: 'bash' }), NOW + 2)).toBe(false);
    expect(b.quiet(rec({ title: 'other' }), NOW + 2)).toBe(false);
  });

  it('the safety sweep looks again after SWEEP_MS, a hold after pendingMs, and a backward clock at once', () => {
    const b = new LookBook({ pendingMs: 3000 });
    b.looked('%1', NOW, false);
    expect(b.quiet(rec(), NOW + 1)).toBe(true);
    expect(b.quiet(rec(), NOW + SWEEP_MS - 1)).toBe(true);
    expect(b.quiet(rec(), NOW + SWEEP_MS)).toBe(false);
    expect(b.quiet(rec(), NOW - 1)).toBe(false);
    b.looked('%1', NOW, true);
    expect(b.anyPending()).toBe(true);
    expect(b.quiet(rec(), NOW + 2999)).toBe(true);
    expect(b.quiet(rec(), NOW + 3000)).toBe(false);
  });

  it('a pane found not to be an agent waits for the longer sweep, unless its listing moves', () => {
    const b = new LookBook({ pendingMs: 3000 });
    const shell = rec({ currentCommand: 'bash', options: {} });
    b.looked('%1', NOW, false, NOT_AGENT_SWEEP_MS);
    expect(b.quiet(shell, NOW + 1)).toBe(true);
    expect(b.quiet(shell, NOW + SWEEP_MS)).toBe(true);
    expect(b.quiet(shell, NOW + NOT_AGENT_SWEEP_MS)).toBe(false);
    expect(b.quiet({ ...shell, currentCommand: 'claude' }, NOW + 2)).toBe(false);
  });

  it('only holds the clock can end keep a pane looked at: dwell and an undecayed hook claim, as the fold marks them', () => {
    const facts: Facts = { pid: 100, foregroundIsAgent: true, scrolled: false, historyView: false };
    const manifest = { capture: { visible: ['idle', 'working', 'blocked'] as State[] } };
    const screen = (state: State): Evidence => ({ provenance: 'screen_rule', claim: { kind: 'state', state, detail: null }, at: NOW, label: 's' });
    const run = (prev: StampedState, ev: Evidence[], f: Partial<Facts> = {}) => fold(prev, { ...facts, ...f }, ev, manifest, DEFAULT_FOLD, NOW);
    const dwell = run(stamp({ evidenceAt: NOW - 1000 }), [screen('idle')]);
    expect(dwell).toMatchObject({ action: 'hold', waitsOnClock: true });
    const undecayed = run(stamp({ source: 'hook', evidenceAt: NOW - 1000 }), [screen('idle')]);
    expect(undecayed).toMatchObject({ action: 'hold', waitsOnClock: true });
    expect(waitsOnClock(dwell)).toBe(true);
    expect(waitsOnClock(undecayed)).toBe(true);
    // The wording of a reason is for people; rewording it changes nothing here.
    const reworded: Verdict = { ...dwell, reason: 'reworded' };
    expect(waitsOnClock(reworded)).toBe(true);
    expect(waitsOnClock(run(stamp(), [screen('idle')], { scrolled: true }))).toBe(false);
    expect(waitsOnClock(run(stamp({ source: 'hook', evidenceAt: NOW - 1000 }), []))).toBe(false);
    expect(waitsOnClock(run(stamp(), []))).toBe(false);
    expect(waitsOnClock(run(stamp({ evidenceAt: NOW - 10_000 }), [screen('idle')]))).toBe(false);
  });

  it('forgets panes that are gone', () => {
    const b = new LookBook({ pendingMs: 3000 });
    b.looked('%1', NOW, true);
    b.keepOnly(new Set(['%2']));
    expect(b.anyPending()).toBe(false);
    expect(b.quiet(rec(), NOW + 1)).toBe(false);
  });
});
