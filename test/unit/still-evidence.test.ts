// The working→idle dwell after a still spell: a watched engine does not rewrite a stamp that would
// change nothing, so the dwell has to count from when the still screen next painted.

import { describe, expect, it } from 'vitest';
import { fold } from '../../collector/core/fold.js';
import { withStillEvidence } from '../../collector/core/still-evidence.js';
import { DEFAULT_FOLD, type Evidence, type Facts, type StampedState, type State, type Verdict } from '../../collector/core/types.js';
import { StillScreens } from '../../collector/engine/still-screens.js';

const T0 = 1_700_000_000_000;
const FACTS: Facts = { pid: 100, foregroundIsAgent: true, scrolled: false, historyView: false };
const MANIFEST = { capture: { visible: ['idle', 'working', 'blocked'] as State[] } };

function stamp(over: Partial<StampedState> = {}): StampedState {
  return {
    state: 'working',
    detail: null,
    source: 'capture',
    evidenceAt: T0,
    since: T0,
    stampedAt: T0,
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
const screen = (state: State, at: number): Evidence => ({
  provenance: 'screen_rule',
  claim: { kind: 'state', state, detail: null },
  at,
  label: `screen ${state}`,
});
const look = (prev: StampedState | null, state: State, now: number): Verdict => fold(prev, FACTS, [screen(state, now)], MANIFEST, DEFAULT_FOLD, now);

describe('withStillEvidence', () => {
  const seen = { state: 'working' as State, evidenceAt: T0, paintedAt: null };

  it('a capture claim on a screen that has not painted since counts as seen now', () => {
    expect(withStillEvidence(stamp(), seen, T0 + 9000)?.evidenceAt).toBe(T0 + 9000);
  });

  it('once the screen painted, the claim counts as seen until that paint, never later than now', () => {
    expect(withStillEvidence(stamp(), { ...seen, paintedAt: T0 + 8000 }, T0 + 9000)?.evidenceAt).toBe(T0 + 8000);
    expect(withStillEvidence(stamp(), { ...seen, paintedAt: T0 + 9500 }, T0 + 9000)?.evidenceAt).toBe(T0 + 9000);
  });

  it('hook claims, stamps another writer changed and panes never seen are left as stored', () => {
    const hook = stamp({ source: 'hook' });
    expect(withStillEvidence(hook, seen, T0 + 9000)).toBe(hook);
    const moved = stamp({ evidenceAt: T0 + 1 });
    expect(withStillEvidence(moved, seen, T0 + 9000)).toBe(moved);
    const other = stamp({ state: 'idle' });
    expect(withStillEvidence(other, seen, T0 + 9000)).toBe(other);
    expect(withStillEvidence(stamp(), null, T0 + 9000)?.evidenceAt).toBe(T0);
    expect(withStillEvidence(null, seen, T0)).toBeNull();
  });
});

describe('a working screen still for 10 s, then idle', () => {
  /** One look as the engine makes it: prior from memory, fold, then what the store holds after. */
  function engineLook(stills: StillScreens, stored: StampedState | null, state: State, now: number): { v: Verdict; stored: StampedState | null } {
    const v = fold(stills.prior('%1', stored, now, true), FACTS, [screen(state, now)], MANIFEST, DEFAULT_FOLD, now);
    // A watched engine writes nothing for a look that changes nothing and for a hold over the
    // same claim; a publish of a new state writes the claim with the look's evidence time.
    const after =
      v.action === 'publish' && (stored === null || v.state !== stored.state) ? stamp({ state: v.state, evidenceAt: now, since: now, stampedAt: now }) : stored;
    stills.looked('%1', v, after, true, now);
    return { v, stored: after };
  }

  it('the stored stamp alone (the old behaviour) skips the dwell', () => {
    expect(look(stamp(), 'idle', T0 + 10_000)).toMatchObject({ action: 'publish', state: 'idle' });
  });

  it('holds idle for the dwell counted from the paint, then publishes it', () => {
    const stills = new StillScreens();
    let s = engineLook(stills, null, 'working', T0).stored;
    expect(s).toMatchObject({ state: 'working', evidenceAt: T0 });
    // Sweep looks at the still screen: nothing is written, the stored evidence time stays T0.
    s = engineLook(stills, s, 'working', T0 + 5000).stored;
    expect(s?.evidenceAt).toBe(T0);
    stills.painted('%1', T0 + 10_000);
    const first = engineLook(stills, s, 'idle', T0 + 10_150);
    expect(first.v).toMatchObject({ action: 'hold', reason: 'dwell', waitsOnClock: true });
    // Within the dwell from the paint it still holds, even after more paints.
    stills.painted('%1', T0 + 11_000);
    expect(engineLook(stills, s, 'idle', T0 + 12_900).v).toMatchObject({ action: 'hold', reason: 'dwell' });
    expect(engineLook(stills, s, 'idle', T0 + 13_001).v).toMatchObject({ action: 'publish', state: 'idle', setAttention: true });
  });

  it('a hold over a screen whose paint was missed does not renew its own dwell', () => {
    const stills = new StillScreens();
    const s = engineLook(stills, null, 'working', T0).stored;
    // No paint reached the engine, yet the sweep finds idle: the dwell runs from this look.
    expect(engineLook(stills, s, 'idle', T0 + 10_000).v).toMatchObject({ action: 'hold', reason: 'dwell' });
    expect(engineLook(stills, s, 'idle', T0 + 12_000).v).toMatchObject({ action: 'hold', reason: 'dwell' });
    expect(engineLook(stills, s, 'idle', T0 + 13_001).v).toMatchObject({ action: 'publish', state: 'idle' });
  });

  it('an unwatched engine remembers nothing: its looks rewrite the evidence time anyway', () => {
    const stills = new StillScreens();
    const s = stamp();
    stills.looked('%1', look(null, 'working', T0), s, false, T0);
    expect(stills.prior('%1', s, T0 + 10_000, true)).toBe(s);
    stills.looked('%1', look(null, 'working', T0), s, true, T0);
    expect(stills.prior('%1', s, T0 + 10_000, false)).toBe(s);
  });
});
