// jump's choices and trail, without tmux.

import { describe, expect, it } from 'vitest';
import { closestVerb } from '../../cli/help.js';
import {
  homeOf,
  MENU_TIMEOUT_DEFAULT_S,
  menuOrder,
  menuTimeoutMs,
  pickAttention,
  pickBlocked,
  pickNext,
  popTrail,
  pushTrail,
  trailOption,
  TRAIL_CAP,
} from '../../shared/jump-plan.js';
import type { AgentRow } from '../../shared/row.js';

const row = (pane: string, locator: string, state: AgentRow['state'], since_ms: number, attention = false) =>
  ({ pane, locator, state, since_ms, attention }) as AgentRow;

const rows = [
  row('%1', 'main:0.0', 'idle', 10, true),
  row('%2', 'main:1.0', 'blocked', 300),
  row('%3', 'main:2.0', 'blocked', 200),
  row('%4', 'work:0.0', 'working', 5),
  row('%5', 'main:10.0', 'idle', 1),
];

describe('jump targets', () => {
  it('--attention: oldest blocked first, then unseen idle, and on from the origin', () => {
    expect(pickAttention(rows, 'work:0.0')!.pane).toBe('%3');
    expect(pickAttention(rows, 'main:2.0')!.pane).toBe('%2');
    expect(pickAttention(rows, 'main:1.0')!.pane).toBe('%1');
    expect(pickAttention(rows, 'main:0.0')!.pane).toBe('%3');
    expect(pickAttention([rows[3]!], 'x:0.0')).toBeNull();
  });
  it('--blocked and --next', () => {
    expect(pickBlocked(rows)!.pane).toBe('%3');
    expect(pickNext(rows, 'main:2.0')!.pane).toBe('%5'); // window 10 sorts after 2, numerically
    expect(pickNext(rows, 'work:0.0')!.pane).toBe('%1'); // wraps
    expect(pickNext(rows, 'garbage')!.pane).toBe('%1');
  });
  it('--menu order: blocked, working, idle, then age', () => {
    expect(menuOrder(rows).map((r) => r.pane)).toEqual(['%3', '%2', '%4', '%5', '%1']);
  });
});

describe('the trail', () => {
  it('pushes without repeating the top, caps its length, pops and finds home', () => {
    let t: string[] = [];
    for (let i = 0; i < TRAIL_CAP + 3; i++) t = pushTrail(t, `s:${i}.0`);
    expect(t).toHaveLength(TRAIL_CAP);
    expect(pushTrail(t, t[t.length - 1]!)).toBe(t);
    expect(popTrail(['s:1.0', 'junk'])).toEqual({ to: 's:1.0', rest: [] });
    expect(popTrail([])).toEqual({ to: null, rest: [] });
    expect(homeOf(['junk', 's:4.1', 's:5.0'])).toBe('s:4.1');
  });
  it('keys the option by the client name', () => {
    expect(trailOption('/dev/pts/3')).toMatch(/^@tma_origin__dev_pts_3_[0-9a-f]{8}$/);
    expect(trailOption('/dev/pts/3')).not.toBe(trailOption('/dev/pts/4'));
  });
});

it('an unknown verb suggests the closest one', () => {
  const verbs = ['ls', 'status', 'act', 'jump', 'install-hooks', 'install-keys', 'init', 'doctor'];
  expect(closestVerb('jmp', verbs)).toBe('jump');
  expect(closestVerb('install-hook', verbs)).toBe('install-hooks');
  expect(closestVerb('docter', verbs)).toBe('doctor');
  expect(closestVerb('zzzzzzzz', verbs)).toBeNull();
});

describe('the jump menu bound', () => {
  it('defaults to a minute; the flag wins over the environment; junk is refused', () => {
    expect(MENU_TIMEOUT_DEFAULT_S).toBe(60);
    expect(menuTimeoutMs(undefined, undefined)).toBe(60_000);
    expect(menuTimeoutMs(undefined, '')).toBe(60_000);
    expect(menuTimeoutMs(undefined, '120')).toBe(120_000);
    expect(menuTimeoutMs('2.5', '120')).toBe(2500);
    for (const bad of ['0', '-1', 'soon', '1e3', '90000', ''])
      expect(() => menuTimeoutMs(bad, undefined)).toThrow(`--menu-timeout takes seconds between 0 and 86400, not "${bad}"`);
    expect(() => menuTimeoutMs(undefined, 'x')).toThrow('TMA_JUMP_MENU_TIMEOUT takes seconds');
  });
});
