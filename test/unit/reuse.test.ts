import { describe, expect, it } from 'vitest';
import { canReuseStamp } from '../../collector/core/reuse.js';
import { DEFAULT_FOLD, type StampedState } from '../../collector/core/types.js';

const NOW = 1_790_000_100_000;
const stamp = (over: Partial<StampedState> = {}): StampedState => ({
  state: 'idle',
  detail: null,
  source: 'capture',
  evidenceAt: NOW - 10_000,
  since: NOW - 10_000,
  stampedAt: NOW - 5000,
  attention: false,
  notifiedAt: null,
  turnAt: 0,
  hash: 7n,
  pid: 1,
  session: null,
  subagents: [],
  ...over,
});
// The window printed last in the second before the stamp.
const quietActivity = Math.floor((NOW - 5000) / 1000) - 1;

describe('quiet-pane reuse', () => {
  it('reuses a captured, settled, quiet idle pane', () => {
    expect(canReuseStamp(stamp(), quietActivity, true, DEFAULT_FOLD, NOW)).toBe(true);
  });

  it('the activity second must lie wholly before the stamp', () => {
    const stampedAt = 1_790_000_000_000;
    const s = stamp({ stampedAt });
    expect(canReuseStamp(s, stampedAt / 1000 - 1, true, DEFAULT_FOLD, NOW)).toBe(true);
    expect(canReuseStamp(s, stampedAt / 1000, true, DEFAULT_FOLD, NOW)).toBe(false);
    expect(canReuseStamp(s, 0, true, DEFAULT_FOLD, NOW)).toBe(false);
  });

  it('never reuses what may be stale for another reason', () => {
    const a = quietActivity;
    expect(canReuseStamp(stamp(), a, true, { ...DEFAULT_FOLD, freshnessMs: 0 }, NOW)).toBe(false);
    expect(canReuseStamp(stamp({ hash: null }), a, true, DEFAULT_FOLD, NOW)).toBe(false);
    expect(canReuseStamp(stamp({ stampedAt: NOW + 1 }), a, true, DEFAULT_FOLD, NOW)).toBe(false);
    expect(canReuseStamp(stamp({ state: 'working' }), a, true, DEFAULT_FOLD, NOW)).toBe(false);
    expect(canReuseStamp(stamp({ source: 'process', state: 'unknown' }), a, true, DEFAULT_FOLD, NOW)).toBe(false);
    expect(canReuseStamp(stamp({ source: 'capture' }), a, false, DEFAULT_FOLD, NOW)).toBe(false);
  });

  it('a hook claim is reused until its decay, exactly at it too', () => {
    const a = quietActivity;
    expect(canReuseStamp(stamp({ source: 'hook', evidenceAt: NOW - 60_000 }), a, true, DEFAULT_FOLD, NOW)).toBe(true);
    expect(canReuseStamp(stamp({ source: 'hook', evidenceAt: NOW - 60_001 }), a, true, DEFAULT_FOLD, NOW)).toBe(false);
    expect(canReuseStamp(stamp({ source: 'hook', state: 'blocked', evidenceAt: NOW - 300_000 }), a, true, DEFAULT_FOLD, NOW)).toBe(true);
    expect(canReuseStamp(stamp({ source: 'hook', state: 'blocked', evidenceAt: NOW - 300_001 }), a, true, DEFAULT_FOLD, NOW)).toBe(false);
  });
});
