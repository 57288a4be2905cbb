import { afterEach, describe, expect, it, vi } from 'vitest';
import { HookRequests, hookBehaviorOf, permissionWire, type HookEnd } from '../../collector/act/hook-requests.js';

afterEach(() => vi.useRealTimers());

function held(r: HookRequests, id: string, waitMs = 1000): HookEnd[] {
  const ends: HookEnd[] = [];
  r.register({ id, agent: 'claude', pane: '%1' }, waitMs, (e) => ends.push(e));
  return ends;
}

describe('HookRequests', () => {
  it('answers once: a second answer finds it answered, the keys find it answered too', () => {
    const r = new HookRequests();
    const ends = held(r, 'hook-a');
    expect(r.settle('%1', 'allow', 'hook-a')).toEqual({ kind: 'answered', id: 'hook-a' });
    expect(r.settle('%1', 'allow', 'hook-a')).toEqual({ kind: 'answered-before', id: 'hook-a' });
    expect(r.settle('%1', null, 'hook-a')).toEqual({ kind: 'answered-before', id: 'hook-a' });
    expect(ends).toEqual([{ kind: 'answered', behavior: 'allow' }]);
  });

  it('the key lane withdraws a waiting hook, which then cannot be answered', () => {
    const r = new HookRequests();
    const ends = held(r, 'hook-b');
    expect(r.settle('%1', null, null)).toEqual({ kind: 'none' });
    expect(r.settle('%1', 'allow', 'hook-b')).toEqual({ kind: 'none' });
    expect(ends).toEqual([{ kind: 'withdrawn', reason: 'keys' }]);
  });

  it('the deadline withdraws it; an answer after it goes to the keys', () => {
    vi.useFakeTimers();
    const r = new HookRequests();
    const ends = held(r, 'hook-c', 500);
    vi.advanceTimersByTime(499);
    expect(r.pendingOn('%1')?.id).toBe('hook-c');
    vi.advanceTimersByTime(1);
    expect(ends).toEqual([{ kind: 'withdrawn', reason: 'timeout' }]);
    expect(r.settle('%1', 'deny', 'hook-c')).toEqual({ kind: 'none' });
  });

  it('refuses an answer bound to another request, and a new request replaces the old', () => {
    const r = new HookRequests();
    const first = held(r, 'hook-d');
    const second = held(r, 'hook-e');
    expect(first).toEqual([{ kind: 'withdrawn', reason: 'replaced' }]);
    expect(r.settle('%1', 'allow', 'hook-d')).toEqual({ kind: 'changed', id: 'hook-e' });
    expect(second).toEqual([]);
    expect(r.withdraw('%1', 'hook-gone', 'hook-d')).toBe(false);
    expect(r.withdraw('%1', 'hook-gone', 'hook-e')).toBe(true);
    expect(second).toEqual([{ kind: 'withdrawn', reason: 'hook-gone' }]);
  });
});

describe('the wire', () => {
  it('prints the PermissionRequest decision both agents read', () => {
    expect(JSON.parse(permissionWire('allow'))).toEqual({ hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'allow' } } });
    expect(JSON.parse(permissionWire('deny'))).toEqual({
      hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'deny', message: 'Denied through tma' } },
    });
    expect([hookBehaviorOf('approve'), hookBehaviorOf('deny'), hookBehaviorOf('interrupt')]).toEqual(['allow', 'deny', null]);
  });
});
