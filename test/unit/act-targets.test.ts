import { describe, expect, test } from 'vitest';
import { pickTargets, planTargets } from '../../collector/act/targets.js';

describe('planTargets', () => {
  const base = { pane: null, selectorEmpty: true, all: false, tmuxPane: null };
  test('an explicit pane wins, but not together with a selector or --all', () => {
    expect(planTargets({ ...base, pane: '%3', tmuxPane: '%1' })).toEqual({ kind: 'pane', pane: '%3' });
    expect(planTargets({ ...base, pane: '%3', selectorEmpty: false }).kind).toBe('usage');
    expect(planTargets({ ...base, pane: '%3', all: true }).kind).toBe('usage');
  });
  test('no pane, no selector, no --all: this pane, or a usage error outside tmux', () => {
    expect(planTargets({ ...base, tmuxPane: '%1' })).toEqual({ kind: 'pane', pane: '%1' });
    expect(planTargets(base).kind).toBe('usage');
    expect(planTargets({ ...base, tmuxPane: '' }).kind).toBe('usage');
  });
  test('a selector or --all selects from a cycle', () => {
    expect(planTargets({ ...base, selectorEmpty: false, tmuxPane: '%1' })).toEqual({ kind: 'select' });
    expect(planTargets({ ...base, all: true, tmuxPane: '%1' })).toEqual({ kind: 'select' });
  });
});

describe('pickTargets', () => {
  const rows = (n: number) => Array.from({ length: n }, (_, i) => ({ pane: `%${i}`, locator: `m:${i}.0` }));
  test('without --all exactly one: none is 3, one fires, two is 1 naming both', () => {
    expect(pickTargets(rows(0), false)).toMatchObject({ kind: 'fail', code: 3 });
    expect(pickTargets(rows(1), false)).toEqual({ kind: 'ok', panes: ['%0'] });
    const two = pickTargets(rows(2), false);
    expect(two).toMatchObject({ kind: 'fail', code: 1 });
    expect(two.kind === 'fail' && two.message).toContain('%0 (m:0.0), %1 (m:1.0)');
  });
  test('with --all every match in order; none is a usage error', () => {
    expect(pickTargets(rows(0), true)).toMatchObject({ kind: 'fail', code: 2 });
    expect(pickTargets(rows(1), true)).toEqual({ kind: 'ok', panes: ['%0'] });
    expect(pickTargets(rows(3), true)).toEqual({ kind: 'ok', panes: ['%0', '%1', '%2'] });
  });
});
