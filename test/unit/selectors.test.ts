import { describe, expect, it } from 'vitest';
import { compareFleetRows, compareLocalRows, EMPTY_SELECTOR, parseStateList, selectRow, SelectorError, sessionOfLocator } from '../../shared/selectors.js';

const row = (over: Partial<Parameters<typeof selectRow>[1]> = {}) => ({
  agent: 'claude',
  state: 'idle' as const,
  attention: false,
  locator: 'work:2.1',
  repo: 'api',
  branch: 'main',
  host: 'a',
  ...over,
});

describe('state lists', () => {
  it('trims, skips empties, drops duplicates', () => {
    expect(parseStateList(' idle, ,done,idle ')).toEqual(['idle', 'done']);
  });
  it('refuses unknown tokens and empty lists', () => {
    expect(() => parseStateList('spinning')).toThrow(SelectorError);
    expect(() => parseStateList(' , ')).toThrow(/empty/);
  });
});

describe('selectRow', () => {
  it('idle matches done panes too; done only done panes', () => {
    const sel = { ...EMPTY_SELECTOR, states: parseStateList('idle') };
    expect(selectRow(sel, row({ attention: true }))).toBe(true);
    const done = { ...EMPTY_SELECTOR, states: parseStateList('done') };
    expect(selectRow(done, row({ attention: true }))).toBe(true);
    expect(selectRow(done, row())).toBe(false);
  });
  it('flags AND together, each an exact match', () => {
    expect(selectRow({ ...EMPTY_SELECTOR, session: 'work', agent: 'claude' }, row())).toBe(true);
    expect(selectRow({ ...EMPTY_SELECTOR, session: 'wor' }, row())).toBe(false);
    expect(selectRow({ ...EMPTY_SELECTOR, repo: 'api', branch: 'dev' }, row())).toBe(false);
    expect(selectRow({ ...EMPTY_SELECTOR, host: 'b' }, row())).toBe(false);
    expect(selectRow({ ...EMPTY_SELECTOR, repo: 'api' }, row({ repo: null }))).toBe(false);
  });
  it('the session of a locator is everything before the last colon', () => {
    expect(sessionOfLocator('my:session:3.0')).toBe('my:session');
  });
});

describe('row order', () => {
  it('local: state rank, then session, then numeric window and pane', () => {
    const rows = [
      { state: 'idle' as const, locator: 'b:1.0' },
      { state: 'idle' as const, locator: 'a:10.0' },
      { state: 'idle' as const, locator: 'a:9.1' },
      { state: 'blocked' as const, locator: 'z:0.0' },
    ];
    expect(rows.sort(compareLocalRows).map((r) => r.locator)).toEqual(['z:0.0', 'a:9.1', 'a:10.0', 'b:1.0']);
  });
  it('fleet: state rank, then host, server, locator', () => {
    const r = (host: string, server: string, state: 'idle' | 'working' = 'idle') => ({ state, locator: 'a:0.0', host, server });
    const rows = [r('b', '/s'), r('a', '/t'), r('a', '/s'), r('z', '/s', 'working')];
    expect(rows.sort(compareFleetRows).map((x) => `${x.host}${x.server}`)).toEqual(['z/s', 'a/s', 'a/t', 'b/s']);
  });
});
