// The terminal views' pure parts: ordering, the key rules (confirmation, holding still, filters),
// the renderer's lines, key parsing and the fleet stream's copy.

import { describe, expect, test } from 'vitest';
import { FleetCopy } from '../../cli/watch/fleet-source.js';
import { parseKeys } from '../../cli/watch/keys.js';
import { initialState, press, selected, visible, withMenu, withRows, type ViewState } from '../../cli/watch/model.js';
import { age, clean, render, type Frame } from '../../cli/watch/render.js';
import { ordered, rowKey, type WatchRow } from '../../cli/watch/rows.js';
import { nextAgeChange } from '../../cli/watch/run-view.js';

const NOW = 1_800_000_000_000;

function row(pane: string, klass: WatchRow['klass'], over: Partial<WatchRow> = {}): WatchRow {
  const host = over.host ?? 'h1';
  return {
    key: rowKey(host, '/s', pane),
    host,
    server: '/s',
    pane,
    agent: 'claude',
    klass,
    detail: klass === 'blocked' ? 'permission' : null,
    since_ms: NOW - 90_000,
    episode_ms: NOW - 90_000,
    locator: `main:${pane.slice(1)}.0`,
    repo: 'ledger',
    branch: 'main',
    pending_summary: klass === 'blocked' ? 'Bash: rm -rf build' : null,
    prompt_id: klass === 'blocked' ? 'p1' : null,
    permission_request: null,
    stale: false,
    local: true,
    ...over,
  };
}

const frame = (over: Partial<Frame> = {}): Frame => ({
  cols: 120,
  rows: 20,
  now: NOW,
  source: 'test',
  table: false,
  hosts: false,
  preview: null,
  previewNote: null,
  ...over,
});
const keys = (s: ViewState, ...ks: string[]) => ks.reduce((st, k) => press(st, k).state, s);

describe('order', () => {
  test('blocked, done, working, idle, unknown; the longest waiting first within a class', () => {
    const rows = [
      row('%1', 'idle'),
      row('%2', 'working'),
      row('%3', 'blocked', { since_ms: NOW - 10 }),
      row('%4', 'unknown'),
      row('%5', 'done'),
      row('%6', 'blocked'),
    ];
    expect(ordered(rows).map((r) => r.pane)).toEqual(['%6', '%3', '%5', '%2', '%1', '%4']);
  });
});

describe('keys', () => {
  const base = withRows(initialState('watch'), [row('%1', 'working'), row('%2', 'blocked')]);

  test('a on a blocked row asks; y fires one act naming that row; anything else cancels', () => {
    const asked = press(base, 'a').state;
    expect(asked.confirm?.row.pane).toBe('%2');
    const yes = press(asked, 'y');
    expect(yes.effect).toEqual({ kind: 'act', action: 'approve', row: asked.confirm!.row });
    expect(yes.state.confirm).toBeNull();
    const no = press(asked, 'x');
    expect(no.effect).toBeNull();
    expect(no.state.confirm).toBeNull();
    expect(no.state.notice).toBe('approve cancelled');
  });

  test('a or d on a row that is not blocked asks nothing and can fire nothing', () => {
    const s = keys(base, 'j', 'a');
    expect(selected(s)?.pane).toBe('%1');
    expect(s.confirm).toBeNull();
    expect(s.notice).toContain('nothing to approve');
    expect(press(s, 'y').effect).toBeNull();
    expect(keys(base, 'j', 'd').confirm).toBeNull();
  });

  test('a stale row is never answered', () => {
    const s = withRows(initialState('watch'), [row('%2', 'blocked', { stale: true })]);
    expect(press(s, 'a').state.confirm).toBeNull();
  });

  test('while a confirmation is open the list holds still; it catches up when the question closes', () => {
    const asked = press(base, 'a').state;
    const moved = withRows(asked, [row('%1', 'working'), row('%2', 'working'), row('%3', 'blocked')]);
    expect(visible(moved).map((r) => [r.pane, r.klass])).toEqual([
      ['%2', 'blocked'],
      ['%1', 'working'],
    ]);
    expect(moved.confirm?.row.klass).toBe('blocked');
    const after = press(moved, 'n').state;
    expect(visible(after).map((r) => r.pane)).toEqual(['%3', '%1', '%2']);
  });

  test('the cursor follows its row when the order changes', () => {
    const s = keys(base, 'j');
    expect(selected(s)?.pane).toBe('%1');
    const moved = withRows(s, [row('%1', 'blocked', { since_ms: NOW - 999_999 }), row('%2', 'blocked')]);
    expect(selected(moved)?.pane).toBe('%1');
  });

  test('/ filters by typed text, 1-5 by state, 0 clears the state', () => {
    const rows = [row('%1', 'working', { agent: 'codex' }), row('%2', 'blocked'), row('%3', 'idle', { agent: 'gemini' })];
    const s = withRows(initialState('watch'), rows);
    const f = keys(s, '/', 'g', 'm', 'enter');
    expect(visible(f).map((r) => r.pane)).toEqual(['%3']);
    expect(f.editing).toBe(false);
    expect(visible(keys(f, '/', 'esc')).length).toBe(3);
    expect(visible(keys(s, '3')).map((r) => r.pane)).toEqual(['%1']);
    expect(visible(keys(s, '3', '3')).length).toBe(3);
    expect(visible(keys(s, '1', '0')).length).toBe(3);
  });

  test('q, Esc and Ctrl-C quit; Enter jumps; in the picker letters filter and Esc quits', () => {
    for (const k of ['q', 'esc', 'ctrl-c']) expect(press(base, k).effect).toEqual({ kind: 'quit' });
    expect(press(base, 'enter').effect).toMatchObject({ kind: 'jump', row: { pane: '%2' } });
    const p = withRows(initialState('picker'), [row('%1', 'working', { agent: 'codex' }), row('%2', 'blocked')]);
    const typed = keys(p, 'c', 'o', 'd');
    expect(visible(typed).map((r) => r.pane)).toEqual(['%1']);
    expect(press(typed, 'q').effect).toBeNull();
    expect(press(typed, 'enter').effect).toMatchObject({ kind: 'jump', row: { pane: '%1' } });
    expect(press(typed, 'tab').effect).toMatchObject({ kind: 'menu', row: { pane: '%1' } });
    expect(press(typed, 'esc').effect).toEqual({ kind: 'quit' });
  });

  test('a menu picks a fireable action into the same confirmation; a refused one fires nothing', () => {
    const m = withMenu(base, base.shown[0]!, [
      { action: 'interrupt', label: 'Interrupt', refusal: 'gated' },
      { action: 'approve', label: 'Approve', refusal: null },
    ]);
    expect(m.menu?.index).toBe(1);
    const refused = press(m, '1');
    expect(refused.effect).toBeNull();
    expect(refused.state.notice).toContain('would not fire: gated');
    const picked = press(m, 'enter').state;
    expect(picked.confirm).toMatchObject({ action: 'approve', row: { pane: '%2' } });
    expect(press(picked, 'y').effect).toMatchObject({ kind: 'act', action: 'approve' });
  });
});

describe('render', () => {
  test('every line fits; blocked heads the list with age, repo and what is asked', () => {
    const s = withRows(initialState('watch'), [row('%1', 'working'), row('%2', 'blocked')]);
    const lines = render(s, frame({ cols: 100 }));
    expect(lines).toHaveLength(20);

    for (const l of lines) expect([...l.replace(/\x1b\[[0-9;]*m/g, '')].length).toBeLessThanOrEqual(100);
    const plain = lines.map((l) => l.replace(/\x1b\[[0-9;]*m/g, ''));
    expect(plain[1]).toBe('BLOCKED (1)');
    expect(plain[2]!.trimEnd()).toMatch(/^> ⚑ blocked +1m +claude +main:2\.0 +ledger@main +Bash: rm -rf build$/);
    expect(plain[3]).toBe('WORKING (1)');
    expect(plain[19]).toContain('a approve');
  });

  test('fleet rows carry their host and a stale host in words; the confirmation names agent, host, where and what', () => {
    const s0 = withRows(initialState('watch'), [row('%2', 'blocked', { host: 'gpu1', local: false })], new Map([['gpu2', 'stale']]));
    const plain = render(s0, frame({ hosts: true, table: true })).map((l) => l.replace(/\x1b\[[0-9;]*m/g, ''));
    expect(plain).toContain('host gpu2: stale');
    expect(plain.find((l) => l.includes('HOST'))).toBeTruthy();
    expect(plain.find((l) => l.startsWith('> '))).toMatch(/gpu1 +main:2\.0/);
    const asked = press(s0, 'a').state;
    const plainOf = (f: Frame) => render(asked, f).map((l) => l.replace(/\x1b\[[0-9;]*m/g, ''));
    expect(plainOf(frame()).slice(-2)).toEqual([
      'Approve claude on gpu1 main:2.0 (%2, 1m)? asks: Bash: rm -rf build [y/N]',
      'y confirms, any other key cancels',
    ]);
    // On a narrow terminal what is asked gives way; the question and its answer keys stay.
    expect(plainOf(frame({ cols: 60 })).at(-2)).toBe('Approve claude on gpu1 main:2.0 (%2, 1m)? asks: Bash:… [y/N]');
  });

  test("an agent's text cannot put a control character on the screen", () => {
    expect(clean('a\x1b[2Jb\x07c\u009b')).toBe('a\\x1b[2Jb\\x07c\\x9b');
    const s = withRows(initialState('watch'), [row('%2', 'blocked', { pending_summary: 'x\x1b]0;pwn\x07y' })]);

    for (const l of render(s, frame())) expect(l.replace(/\x1b\[[0-9;]*m/g, '')).not.toMatch(/[\x00-\x1f]/);
  });

  test('a local row shows its preview under the list', () => {
    const s = withRows(initialState('watch'), [row('%2', 'blocked')]);
    const plain = render(s, frame({ preview: ['first', 'Do you want to proceed?'] })).map((l) => l.replace(/\x1b\[[0-9;]*m/g, ''));
    const head = plain.findIndex((l) => l.startsWith('── %2 main:2.0'));
    expect(head).toBeGreaterThan(0);
    expect(plain.slice(head + 1, head + 3)).toEqual(['first', 'Do you want to proceed?']);
  });
});

describe('redraws', () => {
  test('the next redraw for ages is when a label changes, and never for rows without an age', () => {
    // Under a minute the label is `<1m` throughout: the first change is at one minute, not each second.
    expect(nextAgeChange([row('%1', 'idle', { since_ms: NOW - 1500 })], NOW)).toBe(58_500);
    expect(nextAgeChange([row('%1', 'idle', { since_ms: NOW - 61_000 })], NOW)).toBe(59_000);
    expect(nextAgeChange([row('%1', 'idle', { since_ms: NOW - 3_601_000 })], NOW)).toBe(3_599_000);
    expect(nextAgeChange([row('%1', 'idle', { since_ms: 0 })], NOW)).toBe(Number.POSITIVE_INFINITY);
  });

  test('ages read as ls reads them, but never in seconds: a label changes at most once a minute', () => {
    expect([0, 1500, 59_999, 60_000, 3_599_999, 3_600_000, 86_400_000].map(age)).toEqual(['<1m', '<1m', '<1m', '1m', '59m', '1h', '1d']);
  });
});

describe('parseKeys', () => {
  test('names keys, splits a burst, skips escape sequences it does not use', () => {
    expect(parseKeys('jk\x1b[A\x1b[B\r\t\x7f\x03')).toEqual(['j', 'k', 'up', 'down', 'enter', 'tab', 'backspace', 'ctrl-c']);
    expect(parseKeys('\x1b')).toEqual(['esc']);
    expect(parseKeys('\x1b[5~q')).toEqual(['q']);
  });
});

describe('FleetCopy', () => {
  const fleetRow = (host: string, pane: string, state: string) => ({ ...row(pane, 'working', { host }), state, done: false, stale: false, since: 0 });
  test('a document replaces, changes move rows and hosts; a stale host marks its rows', () => {
    const c = new FleetCopy();
    const h = (host: string, stale: boolean) => ({ host, stale, reachable: !stale, reason: null, clock_offset_ms: 0, actions_allowed: [] });
    expect(
      c.apply(JSON.stringify({ schema: 1, agents: [fleetRow('a', '%1', 'blocked'), fleetRow('b', '%1', 'idle')], hosts: [h('a', false), h('b', false)] })),
    ).toBe(true);
    expect(c.view().rows.map((r) => `${r.host}${r.pane}${r.klass}`)).toEqual(['a%1blocked', 'b%1idle']);
    c.apply(JSON.stringify({ schema: 1, type: 'changes', upserts: [fleetRow('a', '%1', 'working')], removals: [], hosts: [h('b', true)] }));
    const v = c.view();
    expect(v.rows.map((r) => `${r.host}${r.pane}${r.klass}${r.stale ? '!' : ''}`)).toEqual(['a%1working', 'b%1idle!']);
    expect(v.trouble.get('b')).toBe('stale');
    c.apply(JSON.stringify({ schema: 1, type: 'changes', hosts_gone: ['b'] }));
    expect(c.view().rows.map((r) => r.host)).toEqual(['a']);
    expect(c.apply('not json')).toBe(false);
  });
});
