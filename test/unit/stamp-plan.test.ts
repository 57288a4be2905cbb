import { describe, expect, it } from 'vitest';
import { guardFor, guardSuppresses, planFromVerdict, projectStamp } from '../../collector/core/stamp-plan.js';
import type { Guard, PublishPlan, StampedState, Verdict } from '../../collector/core/types.js';

const NOW = 1_700_000_100_000;

function verdict(over: Partial<Verdict> = {}): Verdict {
  return {
    state: 'working',
    detail: null,
    winning: { source: 'capture', at: NOW - 7, label: 'r1' },
    action: 'publish',
    mayOverride: false,
    setAttention: false,
    episodeReset: false,
    corroborates: false,
    prev: null,
    reason: 'test',
    ...over,
  };
}

function stamp(over: Partial<StampedState> = {}): StampedState {
  return {
    state: 'working',
    detail: 'old',
    source: 'capture',
    evidenceAt: NOW - 10_000,
    since: NOW - 20_000,
    stampedAt: NOW - 9_000,
    attention: false,
    notifiedAt: NOW - 15_000,
    turnAt: NOW - 16_000,
    hash: 9n,
    pid: 100,
    session: 's1',
    subagents: ['x'],
    ...over,
  };
}

function plan(over: Partial<PublishPlan> = {}): PublishPlan {
  return {
    kind: 'publish',
    state: 'working',
    detail: null,
    source: 'capture',
    evidenceAt: NOW - 7,
    since: NOW - 7,
    stampedAt: NOW,
    hash: 42n,
    pid: 100,
    name: 'claude',
    setAttention: false,
    episodeReset: false,
    guard: { kind: 'protect_hook' },
    ...over,
  };
}

describe('guardFor', () => {
  it('writes through on an episode reset or an overriding verdict, before anything else', () => {
    const unconditional = { kind: 'unconditional' };
    expect(guardFor(verdict({ episodeReset: true, state: 'blocked' }))).toEqual(unconditional);
    expect(guardFor(verdict({ episodeReset: true, winning: { source: 'hook', at: 1, label: '' } }))).toEqual(unconditional);
    expect(guardFor(verdict({ mayOverride: true, state: 'blocked' }))).toEqual(unconditional);
    expect(guardFor(verdict({ mayOverride: true, winning: { source: 'hook', at: 1, label: '' } }))).toEqual(unconditional);
  });

  it('refreshes a hook claim only while it stands', () => {
    const v = verdict({ state: 'blocked', corroborates: true, winning: { source: 'hook', at: NOW - 3, label: '' } });
    expect(guardFor(v)).toEqual({ kind: 'refresh_claim', state: 'blocked' });
  });

  it('carves blocked capture out at the capture time', () => {
    expect(guardFor(verdict({ state: 'blocked', winning: { source: 'capture', at: NOW - 3, label: '' } }))).toEqual({ kind: 'carve_out', captureAt: NOW - 3 });
  });

  it('protects hook claims from any other capture, first-sight unknown included', () => {
    expect(guardFor(verdict({ state: 'working' }))).toEqual({ kind: 'protect_hook' });
    expect(guardFor(verdict({ state: 'idle' }))).toEqual({ kind: 'protect_hook' });
    expect(guardFor(verdict({ state: 'unknown', winning: { source: 'capture', at: NOW, label: 'first sight' } }))).toEqual({ kind: 'protect_hook' });
  });
});

describe('planFromVerdict', () => {
  it('turns a hold into a hash and freshness refresh', () => {
    expect(planFromVerdict(verdict({ action: 'hold' }), { pid: 1, name: 'claude', hash: 5n, now: NOW })).toEqual({ kind: 'hold', stampedAt: NOW, hash: 5n });
  });

  it('turns a publish into the full tuple with since and evidence_at from the winner', () => {
    const v = verdict({ state: 'idle', detail: 'd', setAttention: true, episodeReset: true, winning: { source: 'capture', at: NOW - 7, label: '' } });
    expect(planFromVerdict(v, { pid: 321, name: 'codex', hash: null, now: NOW })).toEqual({
      kind: 'publish',
      state: 'idle',
      detail: 'd',
      source: 'capture',
      evidenceAt: NOW - 7,
      since: NOW - 7,
      stampedAt: NOW,
      hash: null,
      pid: 321,
      name: 'codex',
      setAttention: true,
      episodeReset: true,
      guard: { kind: 'unconditional' },
    });
  });
});

describe('guardSuppresses', () => {
  const hookAt = (evidenceAt: number, state: StampedState['state'] = 'working') => stamp({ source: 'hook', evidenceAt, state });

  it('never suppresses unconditional writes', () => {
    expect(guardSuppresses({ kind: 'unconditional' }, hookAt(NOW + 1000))).toBe(false);
  });

  it('protects hook claims from capture', () => {
    const g: Guard = { kind: 'protect_hook' };
    expect(guardSuppresses(g, hookAt(0))).toBe(true);
    expect(guardSuppresses(g, stamp({ source: 'capture' }))).toBe(false);
    expect(guardSuppresses(g, stamp({ source: 'process' }))).toBe(false);
    expect(guardSuppresses(g, null)).toBe(false);
  });

  it('lets a carve-out through only when the capture is strictly newer', () => {
    const g: Guard = { kind: 'carve_out', captureAt: NOW };
    expect(guardSuppresses(g, hookAt(NOW - 1))).toBe(false);
    expect(guardSuppresses(g, hookAt(NOW))).toBe(true);
    expect(guardSuppresses(g, hookAt(NOW + 1))).toBe(true);
    expect(guardSuppresses(g, stamp({ source: 'capture', evidenceAt: NOW + 1 }))).toBe(false);
  });

  it('refreshes only a claim still in the same state', () => {
    const g: Guard = { kind: 'refresh_claim', state: 'blocked' };
    expect(guardSuppresses(g, hookAt(0, 'blocked'))).toBe(false);
    expect(guardSuppresses(g, hookAt(0, 'idle'))).toBe(true);
    expect(guardSuppresses(g, null)).toBe(true);
  });

  it('arbitrates hooks by the last hook event time, equal times going to the newcomer', () => {
    const g: Guard = { kind: 'hook_arbitrate', sentAt: NOW };
    const sent = (t: number, over = stamp({ source: 'hook', evidenceAt: t })) => ({ ...over, hookAt: t });
    expect(guardSuppresses(g, sent(NOW - 1))).toBe(false);
    expect(guardSuppresses(g, sent(NOW))).toBe(false);
    expect(guardSuppresses(g, sent(NOW + 1))).toBe(true);
    // Whatever source the stored tuple has now: a screen read never reorders hook events.
    expect(guardSuppresses(g, sent(NOW + 1, stamp({ source: 'capture', evidenceAt: NOW + 1 })))).toBe(true);
    // A screen corroboration moved evidence_at past the event; the hook before it was older.
    expect(guardSuppresses(g, sent(NOW - 500, stamp({ source: 'hook', evidenceAt: NOW + 900 })))).toBe(false);
    expect(guardSuppresses(g, null)).toBe(false);
    // A stored time more than a minute ahead is a backward clock step: it holds nothing back.
    expect(guardSuppresses(g, sent(NOW + 60_000))).toBe(true);
    expect(guardSuppresses(g, sent(NOW + 60_001))).toBe(false);
  });
});

describe('projectStamp', () => {
  it('projects a removal as nothing stamped', () => {
    expect(projectStamp(stamp(), { kind: 'remove' })).toBeNull();
  });

  it('projects a hold as the stored tuple with a fresh stamp and hash', () => {
    const prev = stamp();
    expect(projectStamp(prev, { kind: 'hold', stampedAt: NOW, hash: 7n })).toEqual({ ...prev, stampedAt: NOW, hash: 7n });
    expect(projectStamp(prev, { kind: 'hold', stampedAt: NOW, hash: null })).toEqual({ ...prev, stampedAt: NOW });
    expect(projectStamp(null, { kind: 'hold', stampedAt: NOW, hash: 7n })).toBeNull();
  });

  it('shows the stored claim when the guard suppresses, with the plain fields refreshed', () => {
    const prev = stamp({ source: 'hook', state: 'idle', attention: true });
    const out = projectStamp(prev, plan({ state: 'working', pid: 555, setAttention: true }));
    expect(out).toEqual({ ...prev, hash: 42n, pid: 555, stampedAt: NOW });
  });

  it('shows nothing stamped when a refresh is suppressed against an empty store', () => {
    expect(projectStamp(null, plan({ source: 'hook', guard: { kind: 'refresh_claim', state: 'working' } }))).toBeNull();
  });

  it('keeps since across a continuing state run and takes the new one on a change', () => {
    const prev = stamp({ state: 'working' });
    expect(projectStamp(prev, plan({ state: 'working' }))?.since).toBe(prev.since);
    expect(projectStamp(prev, plan({ state: 'idle' }))?.since).toBe(NOW - 7);
    expect(projectStamp(null, plan())?.since).toBe(NOW - 7);
  });

  it('rewrites a since stranded more than 2000 ms ahead of the new stamp', () => {
    const at = (since: number) => projectStamp(stamp({ since }), plan())?.since;
    expect(at(NOW + 1999)).toBe(NOW + 1999);
    expect(at(NOW + 2000)).toBe(NOW + 2000);
    expect(at(NOW + 2001)).toBe(NOW - 7);
  });

  it('projects an unsuppressed publish field by field', () => {
    const prev = stamp({ state: 'idle', attention: true });
    expect(projectStamp(prev, plan({ state: 'blocked', detail: 'permission', guard: { kind: 'carve_out', captureAt: NOW } }))).toEqual({
      state: 'blocked',
      detail: 'permission',
      source: 'capture',
      evidenceAt: NOW - 7,
      since: NOW - 7,
      stampedAt: NOW,
      attention: true,
      notifiedAt: prev.notifiedAt,
      turnAt: prev.turnAt,
      hash: 42n,
      pid: 100,
      session: 's1',
      subagents: ['x'],
    });
  });

  it('raises attention, and never clears it without a reset', () => {
    expect(projectStamp(stamp({ attention: false }), plan({ setAttention: true }))?.attention).toBe(true);
    expect(projectStamp(stamp({ attention: true }), plan({ setAttention: false }))?.attention).toBe(true);
    expect(projectStamp(stamp({ attention: false }), plan({ setAttention: false }))?.attention).toBe(false);
  });

  it('on an episode reset writes through every guard and clears attention, notify and turn unless raised', () => {
    const prev = stamp({ state: 'blocked', source: 'hook', attention: true, since: NOW - 100 });
    const reset = plan({ state: 'blocked', episodeReset: true, guard: { kind: 'protect_hook' }, pid: 200 });
    expect(projectStamp(prev, reset)).toMatchObject({
      state: 'blocked',
      source: 'capture',
      since: NOW - 7,
      attention: false,
      notifiedAt: null,
      turnAt: 0,
      pid: 200,
    });
    expect(projectStamp(prev, { ...reset, setAttention: true })?.attention).toBe(true);
  });

  it('blanks a detail that cannot be written safely', () => {
    expect(projectStamp(null, plan({ detail: 'a,b' }))?.detail).toBeNull();
    expect(projectStamp(null, plan({ detail: 'rate_limit' }))?.detail).toBe('rate_limit');
  });

  it('keeps the stored hash when the plan has none', () => {
    expect(projectStamp(stamp({ hash: 9n }), plan({ hash: null }))?.hash).toBe(9n);
  });

  it('projects hook arbitration both ways', () => {
    const prev = stamp({ source: 'hook', state: 'working', evidenceAt: NOW });
    const hookPlan = (ev: number) =>
      plan({ state: 'idle', source: 'hook', evidenceAt: ev, since: ev, stampedAt: ev, guard: { kind: 'hook_arbitrate', sentAt: ev } });
    expect(projectStamp(prev, hookPlan(NOW - 1), { hookAt: NOW })?.state).toBe('working');
    expect(projectStamp(prev, hookPlan(NOW), { hookAt: NOW })).toMatchObject({ state: 'idle', source: 'hook', evidenceAt: NOW });
    // The claim's evidence moved on by a screen corroboration: an event sent after the claim lands.
    expect(projectStamp({ ...prev, evidenceAt: NOW + 900 }, hookPlan(NOW + 500), { hookAt: NOW })?.state).toBe('idle');
  });

  it('replays the chain: a hook lands whole on a capture stamp with newer evidence', () => {
    // evidence_at is written before source, so the guard never sees "hook with newer evidence"
    // half-way through the hook's own chain.
    const prev = stamp({ source: 'capture', state: 'working', evidenceAt: NOW + 5, attention: false });
    const ev = NOW;
    const p = plan({
      state: 'idle',
      detail: 'x',
      source: 'hook',
      evidenceAt: ev,
      since: ev,
      setAttention: true,
      guard: { kind: 'hook_arbitrate', sentAt: ev },
    });
    expect(projectStamp(prev, p)).toMatchObject({ state: 'idle', detail: 'x', source: 'hook', since: ev, evidenceAt: ev, attention: true });
    // A hook event sent later than this one holds the whole chain off.
    expect(projectStamp({ ...prev, source: 'hook' }, p, { hookAt: NOW + 5 })).toMatchObject({
      state: 'working',
      source: 'hook',
      evidenceAt: NOW + 5,
      attention: false,
    });
  });

  it('ignores guards in advisory mode but keeps producer-side write-once since', () => {
    const prev = stamp({ source: 'hook', state: 'working' });
    expect(projectStamp(prev, plan({ state: 'working' }), { guarded: false })).toMatchObject({ source: 'capture', since: prev.since });
    expect(projectStamp(prev, plan({ state: 'working' }), { guarded: true })?.source).toBe('hook');
  });
});
