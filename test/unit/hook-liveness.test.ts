// Hook-liveness demotion: which quiet edges of a hook-capable pane need a capture.

import { describe, expect, it } from 'vitest';
import { fold } from '../../collector/core/fold.js';
import { guardSuppresses, projectStamp } from '../../collector/core/stamp-plan.js';
import { suppressExpr } from '../../collector/core/stamp-render.js';
import { DEFAULT_FOLD, type StampedState, type State } from '../../collector/core/types.js';
import { DEMOTE_EDGES, HookLiveness } from '../../collector/engine/hook-liveness.js';

const T0 = 1_700_000_000_000;
const DECAY = 60_000;

function claim(state: State, source: StampedState['source'], evidenceAt: number): StampedState {
  return {
    state,
    detail: null,
    source,
    evidenceAt,
    since: evidenceAt,
    stampedAt: evidenceAt,
    attention: false,
    notifiedAt: null,
    turnAt: 0,
    hash: 1n,
    pid: 100,
    session: 's',
    subagents: [],
  };
}

/** The cycle's order: the stamp it read is observed, then the edge is judged. */
function edgeAt(l: HookLiveness, prev: StampedState | null, now: number, hookCapable = true): boolean {
  l.observe('%1', prev);
  return l.edge('%1', { hookCapable, prev, now });
}

describe('HookLiveness', () => {
  it('a pane that is not hook-capable is captured on every edge and not remembered', () => {
    const l = new HookLiveness({ hookDecayMs: DECAY });
    for (let i = 0; i < 10; i++) expect(edgeAt(l, claim('idle', 'capture', T0), T0 + i * 1000, false)).toBe(true);
    expect(l.size()).toBe(0);
  });

  it('a fresh hook idle or blocked claim needs no capture, however many edges', () => {
    const l = new HookLiveness({ hookDecayMs: DECAY });
    for (const state of ['idle', 'blocked'] as State[]) {
      const prev = claim(state, 'hook', T0);
      for (let i = 1; i <= 20; i++) expect(edgeAt(l, prev, T0 + i * 1000)).toBe(false);
    }
    expect(l.demoted('%1')).toBe(false);
    expect(l.counts).toEqual({ skipped: 40, demotions: 0 });
  });

  it('a hook working claim whose output went quiet is captured (the agent may wait on a prompt)', () => {
    const l = new HookLiveness({ hookDecayMs: DECAY });
    expect(edgeAt(l, claim('working', 'hook', T0), T0 + 1000)).toBe(true);
    expect(l.demoted('%1')).toBe(false);
  });

  it('a pane with no hook claim stored is always captured, and its edges count toward demotion', () => {
    const l = new HookLiveness({ hookDecayMs: DECAY });
    for (let i = 1; i <= DEMOTE_EDGES; i++) expect(edgeAt(l, claim('idle', 'capture', T0), T0 + i)).toBe(true);
    expect(l.demoted('%1')).toBe(true);
  });

  it(`a stale claim skips ${DEMOTE_EDGES - 1} edges, is demoted on the ${DEMOTE_EDGES}th and captured from then on`, () => {
    const l = new HookLiveness({ hookDecayMs: DECAY });
    const stale = claim('idle', 'hook', T0);
    const late = T0 + DECAY + 1;
    const calls = Array.from({ length: 8 }, (_, i) => edgeAt(l, stale, late + i * 1000));
    expect(calls).toEqual([false, false, false, false, true, true, true, true]);
    expect(l.demoted('%1')).toBe(true);
    expect(l.counts).toEqual({ skipped: 4, demotions: 1 });
    // The fold reads the demoted pane's claim as a screen claim, so the screen may overrule it.
    expect(l.prior('%1', stale)?.source).toBe('capture');
    expect(l.prior('%1', claim('idle', 'capture', T0))?.source).toBe('capture');
  });

  it('any hook event restores the trust: count reset, demotion lifted', () => {
    const l = new HookLiveness({ hookDecayMs: DECAY });
    const late = T0 + DECAY + 1;
    for (let i = 0; i < DEMOTE_EDGES; i++) edgeAt(l, claim('idle', 'hook', T0), late + i);
    expect(l.demoted('%1')).toBe(true);
    l.hookEvent('%1', late + 100);
    expect(l.demoted('%1')).toBe(false);
    expect(l.prior('%1', claim('idle', 'hook', T0))?.source).toBe('hook');
    expect(edgeAt(l, claim('idle', 'hook', late + 100), late + 200)).toBe(false);
  });

  it('a hook stamp written by someone else (a direct `tma event`) counts as a hook event', () => {
    const l = new HookLiveness({ hookDecayMs: DECAY });
    const late = T0 + DECAY + 1;
    for (let i = 0; i < DEMOTE_EDGES; i++) edgeAt(l, claim('idle', 'hook', T0), late + i);
    expect(l.demoted('%1')).toBe(true);
    const renewed = claim('blocked', 'hook', late + 50);
    expect(edgeAt(l, renewed, late + 60)).toBe(false);
    expect(l.demoted('%1')).toBe(false);
  });

  it('a hook claim this engine renewed itself (a corroborating look) does not keep dead hooks fresh', () => {
    const l = new HookLiveness({ hookDecayMs: DECAY });
    expect(edgeAt(l, claim('idle', 'hook', T0), T0 + 1000)).toBe(false);
    // The screen agreed with the claim and the engine renewed its evidence time, twice.
    const own1 = claim('idle', 'hook', T0 + 40_000);
    l.wrote('%1', own1);
    expect(edgeAt(l, own1, T0 + 41_000)).toBe(false);
    const own2 = claim('idle', 'hook', T0 + 70_000);
    l.wrote('%1', own2);
    // Past the decay since the last real hook event: the edges count and the pane is demoted.
    const calls = Array.from({ length: DEMOTE_EDGES }, (_, i) => edgeAt(l, own2, T0 + 71_000 + i));
    expect(calls.at(-1)).toBe(true);
    expect(l.demoted('%1')).toBe(true);
  });

  it('the memory is capped: the least recently touched pane goes first', () => {
    const l = new HookLiveness({ hookDecayMs: DECAY, cap: 3 });
    for (const p of ['%1', '%2', '%3']) l.hookEvent(p, T0);
    l.edge('%1', { hookCapable: true, prev: null, now: T0 });
    l.hookEvent('%4', T0);
    expect(l.size()).toBe(3);
    // %2 was the one evicted: keeping the other three keeps everything.
    l.keepOnly(new Set(['%1', '%3', '%4']));
    expect(l.size()).toBe(3);
    l.keepOnly(new Set(['%1']));
    expect(l.size()).toBe(1);
  });

  it('with the claim read as a capture claim, the fold publishes what the screen shows', () => {
    const stale = claim('idle', 'hook', T0);
    const now = T0 + 10_000;
    const screen = [{ provenance: 'screen_rule' as const, claim: { kind: 'state' as const, state: 'working' as State, detail: null }, at: now, label: 's' }];
    const m = { capture: { visible: ['idle', 'working', 'blocked'] as State[] } };
    const facts = { pid: 100, foregroundIsAgent: true, scrolled: false, historyView: false };
    expect(fold(stale, facts, screen, m, DEFAULT_FOLD, now)).toMatchObject({ action: 'hold' });
    expect(fold({ ...stale, source: 'capture' }, facts, screen, m, DEFAULT_FOLD, now)).toMatchObject({ action: 'publish', state: 'working' });
  });
});

describe('the overrule_claim guard of a demoted pane', () => {
  const plan = (claimAt: number) => ({
    kind: 'publish' as const,
    state: 'working' as State,
    detail: null,
    source: 'capture' as const,
    evidenceAt: T0 + 70_000,
    since: T0 + 70_000,
    stampedAt: T0 + 70_000,
    hash: 5n,
    pid: 100,
    name: 'claude',
    setAttention: false,
    episodeReset: false,
    guard: { kind: 'overrule_claim' as const, claimAt },
  });

  it('lands over the stale claim it read, in full', () => {
    expect(projectStamp(claim('idle', 'hook', T0), plan(T0))).toMatchObject({ state: 'working', source: 'capture', evidenceAt: T0 + 70_000 });
  });

  it('is held back by a hook claim newer than the one it read', () => {
    const newer = claim('blocked', 'hook', T0 + 69_000);
    expect(projectStamp(newer, plan(T0))).toMatchObject({ state: 'blocked', source: 'hook', evidenceAt: T0 + 69_000 });
    expect(guardSuppresses({ kind: 'overrule_claim', claimAt: T0 }, newer)).toBe(true);
    expect(guardSuppresses({ kind: 'overrule_claim', claimAt: T0 }, claim('idle', 'capture', T0 + 69_000))).toBe(false);
    expect(suppressExpr({ kind: 'overrule_claim', claimAt: T0 })).toBe(`#{&&:#{==:#{@agent_source},hook},#{e|<:${T0},#{@agent_evidence_at}}}`);
  });
});
