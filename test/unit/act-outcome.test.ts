import { describe, expect, test } from 'vitest';
import { actResult, exitCodeFor, resultObject, resultsEnvelope, severity, worstExit, type ActResult } from '../../collector/act/outcome.js';

describe('outcome -> exit code', () => {
  test('each outcome maps to its code; exited carries the child code', () => {
    expect(exitCodeFor('sent', null)).toBe(0);
    expect(exitCodeFor('replied', null)).toBe(0);
    expect(exitCodeFor('spawned', null)).toBe(0);
    expect(exitCodeFor('exited', null, 0)).toBe(0);
    expect(exitCodeFor('exited', null, 5)).toBe(5);
    expect(exitCodeFor('exited', null, 137)).toBe(137);
    expect(exitCodeFor('timeout', null)).toBe(124);
    expect(exitCodeFor('vanished', 'pane-gone')).toBe(3);
    expect(exitCodeFor('vanished', 'request-gone')).toBe(3);
    expect(exitCodeFor('error', null)).toBe(1);
  });

  test('every gate and binder refusal is 4, the lock alone is 5', () => {
    for (const r of ['gated', 'requires-unmet', 'wrong-agent', 'no-coverage', 'episode-changed', 'request-gone'] as const) {
      expect(exitCodeFor('refused', r)).toBe(4);
    }
    expect(exitCodeFor('refused', 'locked')).toBe(5);
  });
});

describe('fan-out severity', () => {
  const r = (outcome: ActResult['outcome'], reason: ActResult['reason'] = null, code = 0) => actResult('a', '%1', outcome, reason, code);
  const ladder = [r('sent'), r('refused', 'locked'), r('refused', 'gated'), r('vanished', 'pane-gone'), r('timeout'), r('exited', null, 2), r('error')];

  test('acted < locked < gate refusal < vanished < timeout < non-zero exited < error', () => {
    for (let i = 1; i < ladder.length; i++) expect(severity(ladder[i]!)).toBeGreaterThan(severity(ladder[i - 1]!));
    expect(severity(r('exited', null, 0))).toBe(severity(r('sent')));
    expect(severity(r('replied'))).toBe(severity(r('spawned')));
  });

  test("the exit is the worst result's own code, in any order", () => {
    expect(worstExit([])).toBe(0);
    expect(worstExit([r('sent'), r('refused', 'locked')])).toBe(5);
    expect(worstExit([r('refused', 'locked'), r('refused', 'gated')])).toBe(4);
    // A child exiting 2 outranks a vanished pane (3) even though its code is lower.
    expect(worstExit([r('exited', null, 2), r('vanished', 'pane-gone')])).toBe(2);
    expect(worstExit([r('error'), r('exited', null, 9), r('timeout')])).toBe(1);
    expect(worstExit([...ladder].reverse())).toBe(1);
  });
});

describe('JSON shapes', () => {
  test('single result: exact keys in order; cached only when set', () => {
    const res = actResult('approve', '%1', 'sent');
    expect(Object.keys(resultObject(res))).toEqual(['schema', 'action', 'pane', 'outcome', 'exit_code', 'reason']);
    expect(Object.keys(resultObject({ ...res, cached: false }))).toEqual(['schema', 'action', 'pane', 'outcome', 'exit_code', 'reason', 'cached']);
  });

  test('envelope elements carry no schema of their own, in fire order', () => {
    const env = resultsEnvelope([actResult('a', '%2', 'sent'), actResult('a', '%1', 'refused', 'gated')]);
    expect(env).toEqual({
      schema: 1,
      results: [
        { action: 'a', pane: '%2', outcome: 'sent', exit_code: 0, reason: null },
        { action: 'a', pane: '%1', outcome: 'refused', exit_code: 4, reason: 'gated' },
      ],
    });
  });
});
