import { describe, expect, it } from 'vitest';
import { fold, raisesAttention } from '../../collector/core/fold.js';
import { DEFAULT_FOLD, type Evidence, type Facts, type FoldConfig, type StampedState, type State } from '../../collector/core/types.js';

const NOW = 1_700_000_100_000;
const ALL_VISIBLE = { capture: { visible: ['idle', 'working', 'blocked'] as State[] } };
const FACTS: Facts = { pid: 100, foregroundIsAgent: true, scrolled: false, historyView: false };

function stamp(over: Partial<StampedState> = {}): StampedState {
  return {
    state: 'idle',
    detail: null,
    source: 'capture',
    evidenceAt: NOW - 10_000,
    since: NOW - 10_000,
    stampedAt: NOW - 9_000,
    attention: false,
    notifiedAt: null,
    turnAt: 0,
    hash: 1n,
    pid: 100,
    session: null,
    subagents: [],
    ...over,
  };
}

function screen(state: State, at = NOW, detail: string | null = null, label = `screen ${state}`): Evidence {
  return { provenance: 'screen_rule', claim: { kind: 'state', state, detail }, at, label };
}
function title(state: State, at = NOW, detail: string | null = null): Evidence {
  return { provenance: 'title', claim: { kind: 'state', state, detail }, at, label: `title ${state}` };
}
function hook(state: State, at: number, detail: string | null = null, label = `hook ${state}`): Evidence {
  return { provenance: 'hook_event', claim: { kind: 'state', state, detail }, at, label };
}
function lifecycle(at: number): Evidence {
  return { provenance: 'hook_event', claim: { kind: 'lifecycle', phase: 'start' }, at, label: 'hook SessionStart' };
}

function run(prev: StampedState | null, evidence: Evidence[], facts: Partial<Facts> = {}, cfg: FoldConfig = DEFAULT_FOLD, manifest = ALL_VISIBLE) {
  return fold(prev, { ...FACTS, ...facts }, evidence, manifest, cfg, NOW);
}

/** A hook claim whose evidence is `age` ms old. */
function hookClaim(state: State, age: number, over: Partial<StampedState> = {}) {
  return stamp({ state, source: 'hook', evidenceAt: NOW - age, since: NOW - age, ...over });
}

describe('episode reset', () => {
  it('discards the prior stamp when the agent pid changed', () => {
    const prev = hookClaim('working', 1000, { pid: 100, attention: true });
    const v = run(prev, [screen('idle')], { pid: 200 });
    expect(v.episodeReset).toBe(true);
    expect(v.prev).toBeNull();
    // The hook claim no longer protects anything, and with no prior state idle raises nothing.
    expect(v).toMatchObject({ action: 'publish', state: 'idle', setAttention: false, mayOverride: false });
  });

  it('still raises when the new episode opens blocked', () => {
    const v = run(stamp({ state: 'blocked', pid: 100 }), [screen('blocked')], { pid: 200 });
    expect(v).toMatchObject({ episodeReset: true, state: 'blocked', setAttention: true });
  });

  it('turns what would have been a hold into a first-sight publish', () => {
    const v = run(stamp({ pid: 100 }), [], { pid: 200 });
    expect(v).toMatchObject({ episodeReset: true, action: 'publish', state: 'unknown' });
  });

  it('is not a reset when either pid is unknown or they agree', () => {
    const prev = stamp({ pid: 100 });
    expect(run(prev, [screen('idle')], { pid: 100 }).episodeReset).toBe(false);
    expect(run(stamp({ pid: 0 }), [screen('idle')], { pid: 200 }).episodeReset).toBe(false);
    expect(run(prev, [screen('idle')], { pid: 0 }).episodeReset).toBe(false);
    expect(run(prev, [screen('idle')], { pid: 0 }).prev).toBe(prev);
  });
});

describe('P1 fresh hook', () => {
  it('publishes the newest hook state claim with override, even behind a foreign foreground', () => {
    const v = run(
      stamp({ state: 'working', source: 'hook' }),
      [hook('idle', NOW - 50), hook('blocked', NOW - 20, 'permission'), hook('working', NOW - 30), screen('idle')],
      { foregroundIsAgent: false, scrolled: true },
    );
    expect(v).toMatchObject({
      action: 'publish',
      state: 'blocked',
      detail: 'permission',
      mayOverride: true,
      corroborates: false,
      winning: { source: 'hook', at: NOW - 20, label: 'hook blocked' },
    });
  });

  it('keeps the last of equal maxima', () => {
    const v = run(null, [hook('working', NOW, null, 'first'), hook('idle', NOW, null, 'second')]);
    expect(v.state).toBe('idle');
    expect(v.winning.label).toBe('second');
  });

  it('ignores lifecycle claims', () => {
    const v = run(null, [lifecycle(NOW + 5), hook('working', NOW - 5)]);
    expect(v.state).toBe('working');
    const only = run(null, [lifecycle(NOW)]);
    expect(only).toMatchObject({ state: 'unknown', winning: { source: 'capture' }, mayOverride: false });
  });
});

describe('P2 foreground cap', () => {
  it('holds a protected hook claim while the agent is alive behind an editor', () => {
    const prev = hookClaim('working', 1000);
    const v = run(prev, [screen('idle')], { foregroundIsAgent: false });
    expect(v).toMatchObject({ action: 'hold', state: 'working', setAttention: false });
    expect(v.prev).toBe(prev);
  });

  it('publishes unknown from process when the hook claim cannot be protected', () => {
    const expected = { action: 'publish', state: 'unknown', detail: null, mayOverride: true, setAttention: false, winning: { source: 'process', at: NOW } };
    expect(run(hookClaim('working', 1000), [], { foregroundIsAgent: false, pid: 0 })).toMatchObject(expected);
    expect(run(hookClaim('unknown', 1000), [], { foregroundIsAgent: false })).toMatchObject(expected);
    expect(run(stamp({ state: 'blocked' }), [screen('blocked')], { foregroundIsAgent: false })).toMatchObject(expected);
    expect(run(null, [screen('working')], { foregroundIsAgent: false })).toMatchObject(expected);
  });
});

describe('P3 freeze', () => {
  it('holds the stamp while scrolled or in a history view, whatever the screen says', () => {
    const prev = stamp({ state: 'working', source: 'capture', detail: 'x' });
    for (const facts of [{ scrolled: true }, { historyView: true }]) {
      const v = run(prev, [screen('blocked'), screen('idle')], facts);
      expect(v).toMatchObject({ action: 'hold', state: 'working', detail: 'x', mayOverride: false, setAttention: false });
      expect(v.winning).toMatchObject({ source: 'capture', at: prev.evidenceAt });
    }
  });

  it('publishes first-sight unknown when there is nothing to hold', () => {
    const v = run(null, [screen('working')], { scrolled: true });
    expect(v).toMatchObject({
      action: 'publish',
      state: 'unknown',
      detail: null,
      mayOverride: false,
      setAttention: false,
      corroborates: false,
      winning: { source: 'capture', at: NOW },
    });
  });

  it('echoes a legacy activity source as capture', () => {
    expect(run(stamp({ source: 'activity' }), [], { scrolled: true }).winning.source).toBe('capture');
  });
});

describe('P4 slots without a protected claim', () => {
  it('publishes blocked from screen or title without override', () => {
    for (const ev of [screen('blocked', NOW - 1, 'permission'), title('blocked', NOW - 1, 'permission')]) {
      const v = run(stamp({ state: 'working' }), [ev, screen('working'), screen('idle')]);
      expect(v).toMatchObject({ action: 'publish', state: 'blocked', detail: 'permission', mayOverride: false, winning: { source: 'capture', at: NOW - 1 } });
    }
  });

  it('lets working outrank idle when both claim', () => {
    const v = run(stamp({ state: 'idle' }), [screen('idle', NOW), screen('working', NOW - 5)]);
    expect(v).toMatchObject({ state: 'working', winning: { at: NOW - 5 }, mayOverride: false });
  });

  it('picks the newest claim within a slot and the last of equal maxima', () => {
    expect(run(null, [screen('working', NOW - 1, 'a'), screen('working', NOW - 2, 'b')]).detail).toBe('a');
    expect(run(null, [screen('working', NOW, 'a'), title('working', NOW, 'b')]).detail).toBe('b');
  });

  it('publishes idle once dwell has passed, strictly', () => {
    const at = (age: number) => run(stamp({ state: 'working', source: 'capture', evidenceAt: NOW - age }), [screen('idle')]);
    expect(at(2999)).toMatchObject({ action: 'hold', state: 'working', reason: 'dwell' });
    expect(at(3000)).toMatchObject({ action: 'hold', state: 'working', reason: 'dwell' });
    expect(at(3001)).toMatchObject({ action: 'publish', state: 'idle', setAttention: true });
  });

  it('applies dwell to a process-sourced working too, and not after other states', () => {
    expect(run(stamp({ state: 'working', source: 'process', evidenceAt: NOW }), [screen('idle')]).action).toBe('hold');
    expect(run(stamp({ state: 'blocked', evidenceAt: NOW }), [screen('idle')])).toMatchObject({ action: 'publish', state: 'idle' });
    expect(run(null, [screen('idle')])).toMatchObject({ action: 'publish', state: 'idle', setAttention: false });
  });

  it('holds on no evidence, or first-sight unknown without a stamp', () => {
    const prev = stamp({ state: 'blocked' });
    expect(run(prev, [])).toMatchObject({ action: 'hold', state: 'blocked' });
    expect(run(null, [])).toMatchObject({ action: 'publish', state: 'unknown', winning: { source: 'capture', at: NOW } });
  });

  it('does not protect a hook-sourced unknown', () => {
    expect(run(hookClaim('unknown', 10), [screen('idle')])).toMatchObject({ action: 'publish', state: 'idle', mayOverride: false });
  });
});

describe('fold against a hook claim', () => {
  it('corroborates a blocked claim with blocker chrome: hook source, the evidence time, no raise', () => {
    const prev = hookClaim('blocked', 100_000, { detail: 'question' });
    const v = run(prev, [screen('blocked', NOW - 3, 'permission', 'claude r0')]);
    expect(v).toMatchObject({
      action: 'publish',
      state: 'blocked',
      detail: 'question',
      corroborates: true,
      mayOverride: false,
      setAttention: false,
      winning: { source: 'hook', at: NOW - 3, label: 'claude r0' },
    });
  });

  it('carves blocker chrome out of a working or idle claim only when strictly newer', () => {
    for (const state of ['working', 'idle'] as const) {
      const prev = hookClaim(state, 1000);
      const at = (t: number) => run(prev, [screen('blocked', t, 'permission'), screen('working')]);
      expect(at(prev.evidenceAt - 1)).toMatchObject({ action: 'hold', state });
      expect(at(prev.evidenceAt)).toMatchObject({ action: 'hold', state });
      expect(at(prev.evidenceAt + 1)).toMatchObject({
        action: 'publish',
        state: 'blocked',
        detail: 'permission',
        mayOverride: false,
        corroborates: false,
        setAttention: true,
        winning: { source: 'capture', at: prev.evidenceAt + 1 },
      });
    }
  });

  it('holds when the screen is silent: silence never decays a claim', () => {
    expect(run(hookClaim('working', 10_000_000), [])).toMatchObject({ action: 'hold', state: 'working' });
  });

  it('corroborates a matching claim, working outranking co-rendered idle', () => {
    const v = run(hookClaim('working', 1000), [screen('idle', NOW), screen('working', NOW - 1)]);
    expect(v).toMatchObject({ corroborates: true, state: 'working', winning: { source: 'hook', at: NOW - 1 } });
    const idle = run(hookClaim('idle', 1000, { attention: true }), [screen('idle')]);
    expect(idle).toMatchObject({ corroborates: true, state: 'idle', setAttention: false });
  });

  it('decays a working or idle claim only after more than 60 s', () => {
    const at = (age: number) => run(hookClaim('idle', age), [screen('working', NOW, 'busy')]);
    expect(at(59_999)).toMatchObject({ action: 'hold', state: 'idle' });
    expect(at(60_000)).toMatchObject({ action: 'hold', state: 'idle' });
    expect(at(60_001)).toMatchObject({
      action: 'publish',
      state: 'working',
      detail: 'busy',
      mayOverride: true,
      setAttention: false,
      winning: { source: 'capture', at: NOW },
    });
  });

  it('decays a blocked claim only after more than 300 s', () => {
    const at = (age: number) => run(hookClaim('blocked', age), [screen('idle')]);
    expect(at(299_999)).toMatchObject({ action: 'hold', state: 'blocked' });
    expect(at(300_000)).toMatchObject({ action: 'hold', state: 'blocked' });
    expect(at(300_001)).toMatchObject({ action: 'publish', state: 'idle', mayOverride: true, setAttention: false });
    // 60 s is not the blocked budget.
    expect(at(60_001)).toMatchObject({ action: 'hold' });
  });

  it('follows the configured decay budgets', () => {
    const cfg = { ...DEFAULT_FOLD, hookDecayMs: 5000, blockedDecayMs: 7000 };
    expect(run(hookClaim('idle', 5001), [screen('working')], {}, cfg).action).toBe('publish');
    expect(run(hookClaim('idle', 5000), [screen('working')], {}, cfg).action).toBe('hold');
    expect(run(hookClaim('blocked', 7001), [screen('working')], {}, cfg).action).toBe('publish');
    expect(run(hookClaim('blocked', 7000), [screen('working')], {}, cfg).action).toBe('hold');
  });

  it('never decays a state the agent cannot show on screen', () => {
    const noIdle = { capture: { visible: ['working', 'blocked'] as State[] } };
    expect(run(hookClaim('idle', 1_000_000), [screen('working')], {}, DEFAULT_FOLD, noIdle)).toMatchObject({ action: 'hold', state: 'idle' });
    expect(run(hookClaim('working', 1_000_000), [screen('idle')], {}, DEFAULT_FOLD, noIdle)).toMatchObject({ action: 'publish', state: 'idle' });
  });

  it('applies dwell after decay to working -> idle', () => {
    const cfg = { ...DEFAULT_FOLD, hookDecayMs: 1000 };
    const at = (age: number) => run(hookClaim('working', age), [screen('idle')], {}, cfg);
    expect(at(2999)).toMatchObject({ action: 'hold', state: 'working' });
    expect(at(3000)).toMatchObject({ action: 'hold', state: 'working' });
    expect(at(3001)).toMatchObject({ action: 'publish', state: 'idle', mayOverride: true, setAttention: true });
    // dwell is only for working -> idle
    expect(run(hookClaim('idle', 1001), [screen('working')], {}, cfg)).toMatchObject({ action: 'publish', state: 'working' });
  });

  it('holds the prior stamp when the claim stands', () => {
    const prev = hookClaim('working', 1000);
    const v = run(prev, [screen('idle')]);
    expect(v.prev).toBe(prev);
    expect(v.winning).toMatchObject({ source: 'hook', at: prev.evidenceAt });
  });
});

describe('attention raise', () => {
  it('raises blocked from anything but blocked, idle only from working', () => {
    const prevs: (State | null)[] = [null, 'idle', 'working', 'blocked', 'unknown'];
    for (const p of prevs) {
      expect(raisesAttention(p, 'blocked')).toBe(p !== 'blocked');
      expect(raisesAttention(p, 'idle')).toBe(p === 'working');
      expect(raisesAttention(p, 'working')).toBe(false);
      expect(raisesAttention(p, 'unknown')).toBe(false);
    }
  });

  it('applies to hook publishes', () => {
    expect(run(stamp({ state: 'working' }), [hook('idle', NOW)]).setAttention).toBe(true);
    expect(run(stamp({ state: 'idle' }), [hook('idle', NOW)]).setAttention).toBe(false);
    expect(run(stamp({ state: 'blocked' }), [hook('blocked', NOW)]).setAttention).toBe(false);
    expect(run(stamp({ state: 'unknown' }), [hook('blocked', NOW)]).setAttention).toBe(true);
  });

  it('never raises on a hold', () => {
    expect(run(stamp({ state: 'working', evidenceAt: NOW }), [screen('idle')])).toMatchObject({ action: 'hold', setAttention: false });
  });
});
