import { describe, expect, it } from 'vitest';
import { AgeBook, classOf, countClasses, newSlot, rowActions, serverLabel, shortDuration, sseEvents, type PageRow } from '../../hub/web/format.js';

const row = (over: Partial<PageRow> = {}): PageRow => ({
  host: 'h', server: '/tmp/tmux-1000/default', pane: '%1', state: 'working', attention: false, detail: null,
  since_ms: 1_000_000, stamped_at_ms: 1_000_000, stale: false, ...over,
});
const live = { reachable: true, stale: false, actions_allowed: ['approve', 'deny', 'interrupt'] };

describe('web page: durations', () => {
  it.each([
    [0, '0s'], [999, '0s'], [1000, '1s'], [59_999, '59s'], [60_000, '1m'], [61_000, '1m'],
    [3_599_999, '59m'], [3_600_000, '1h'], [3_660_000, '1h 1m'], [86_399_999, '23h 59m'],
    [86_400_000, '1d'], [86_400_000 + 3_600_000, '1d 1h'], [-5000, '0s'],
  ])('%i ms reads %s', (ms, text) => {
    expect(shortDuration(ms)).toBe(text);
  });
});

describe('web page: classes and counts', () => {
  it('counts done apart from idle, and an unknown state token as unknown', () => {
    expect(classOf({ state: 'idle', attention: true })).toBe('done');
    expect(classOf({ state: 'idle', attention: false })).toBe('idle');
    expect(classOf({ state: 'blocked', attention: true })).toBe('blocked');
    expect(classOf({ state: 'sleeping', attention: false })).toBe('unknown');
    const rows = [row({ state: 'idle', attention: true }), row({ state: 'idle' }), row({ state: 'blocked' }), row({ state: 'blocked' })];
    expect(countClasses(rows)).toEqual({ blocked: 2, working: 0, done: 1, idle: 1, unknown: 0 });
  });
});

describe('web page: which buttons a row offers', () => {
  const prompt = row({ state: 'blocked', detail: 'permission' });
  it('approve and deny on a permission prompt, interrupt on a working agent, for operators only', () => {
    expect(rowActions(prompt, live, 'operator')).toEqual(['approve', 'deny']);
    expect(rowActions(row(), live, 'operator')).toEqual(['interrupt']);
    expect(rowActions(row({ state: 'blocked', detail: 'question' }), live, 'operator')).toEqual([]);
    expect(rowActions(row({ state: 'idle' }), live, 'operator')).toEqual([]);
    expect(rowActions(prompt, live, 'viewer')).toEqual([]);
  });

  it('only what the host allows, and nothing on a host that is down, syncing or unknown', () => {
    expect(rowActions(prompt, { ...live, actions_allowed: ['deny'] }, 'operator')).toEqual(['deny']);
    expect(rowActions(prompt, { reachable: true, stale: false }, 'operator')).toEqual([]);
    expect(rowActions(prompt, { ...live, reachable: false }, 'operator')).toEqual([]);
    expect(rowActions(prompt, { ...live, stale: true }, 'operator')).toEqual([]);
    expect(rowActions({ ...prompt, stale: true }, live, 'operator')).toEqual([]);
    expect(rowActions(prompt, undefined, 'operator')).toEqual([]);
  });
});

describe('web page: ages without comparing clocks', () => {
  it('adds the browser time since a stamp was first seen to the host-side age at that stamp', () => {
    const book = new AgeBook();
    const r = row({ since_ms: 1_000_000, stamped_at_ms: 1_240_000 });
    book.observe([r], 50);
    expect(book.ageMs(r, 50)).toBe(240_000);
    expect(book.ageMs(r, 1050)).toBe(241_000);
    // The same stamp again does not restart the page's count; a new one does.
    book.observe([r], 2050);
    expect(book.ageMs(r, 2050)).toBe(242_000);
    const restamped = { ...r, stamped_at_ms: 1_243_000 };
    book.observe([restamped], 2100);
    expect(book.ageMs(restamped, 2100)).toBe(243_000);
  });

  it('stops a stale row at its last observation, has none without a stamp, forgets rows that left', () => {
    const book = new AgeBook();
    const r = row({ since_ms: 1000, stamped_at_ms: 61_000 });
    book.observe([r], 0);
    expect(book.ageMs({ ...r, stale: true }, 90_000)).toBe(60_000);
    const unstamped = row({ pane: '%2', stamped_at_ms: null });
    book.observe([r, unstamped], 0);
    expect(book.ageMs(unstamped, 10)).toBeNull();
    book.observe([unstamped], 0);
    expect(book.ageMs(r, 10)).toBeNull();
    // A host clock stepped back (stamp before since) reads as zero, not negative.
    const stepped = row({ pane: '%3', since_ms: 5000, stamped_at_ms: 4000 });
    book.observe([stepped], 0);
    expect(book.ageMs(stepped, 0)).toBe(0);
  });
});

describe('web page: reading the event stream', () => {
  it('yields each event\'s data once complete, skips keepalives, and keeps the unfinished tail', () => {
    expect(sseEvents('data: {"a":1}\n\n: keepalive\n\ndata: {"b"')).toEqual({ events: ['{"a":1}'], rest: 'data: {"b"' });
    expect(sseEvents('data: {"b"' + ':2}\n\n')).toEqual({ events: ['{"b":2}'], rest: '' });
    expect(sseEvents('data:x\ndata: y\n\n')).toEqual({ events: ['x\ny'], rest: '' });
  });

  it('joins a CRLF split across two chunks instead of seeing an event boundary in it', () => {
    const first = sseEvents('data: 1\r\n\r');
    expect(first.events).toEqual([]);
    expect(sseEvents(`${first.rest}\ndata: 2\r\n\r\n`).events).toEqual(['1', '2']);
  });
});

describe('web page: misc', () => {
  it('labels a server by its socket name and mints distinct slots the act route accepts', () => {
    expect(serverLabel('/tmp/tmux-1000/default')).toBe('default');
    expect(serverLabel('')).toBe('(server gone)');
    const a = newSlot();
    expect(a).toMatch(/^web-[0-9a-f]{24}$/);
    expect(newSlot()).not.toBe(a);
  });
});
