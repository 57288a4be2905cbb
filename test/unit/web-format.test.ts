import { describe, expect, it } from 'vitest';
import {
  actionLabel,
  ageMs,
  askText,
  classOf,
  countClasses,
  detailWord,
  filtersQuery,
  needsYou,
  newSlot,
  parseFilters,
  passes,
  rowActions,
  serverLabel,
  shortDuration,
  sseEvents,
  tabTitle,
  type PageHost,
  type PageRow,
} from '../../hub/web/format.js';
import { Hold, OrderKeeper } from '../../hub/web/order.js';

const row = (over: Partial<PageRow> = {}): PageRow => ({
  host: 'h',
  server: '/tmp/tmux-1000/default',
  pane: '%1',
  state: 'working',
  attention: false,
  detail: null,
  since_ms: 1_000_000,
  stamped_at_ms: 1_000_000,
  stale: false,
  ...over,
});
const live = { reachable: true, stale: false, actions_allowed: ['approve', 'deny', 'interrupt'] };

describe('web page: durations', () => {
  it.each([
    [0, '0s'],
    [999, '0s'],
    [1000, '1s'],
    [59_999, '59s'],
    [60_000, '1m'],
    [61_000, '1m'],
    [3_599_999, '59m'],
    [3_600_000, '1h'],
    [3_660_000, '1h 1m'],
    [86_399_999, '23h 59m'],
    [86_400_000, '1d'],
    [86_400_000 + 3_600_000, '1d 1h'],
    [-5000, '0s'],
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
    // Claude Code 2.1.332's dialogs that approve and deny answer with their own keys.
    for (const detail of ['auto-mode-offer', 'auto-mode-check', 'permission-cursor-no', 'permission-cursor-yes']) {
      expect(rowActions(row({ state: 'blocked', detail }), live, 'operator'), detail).toEqual(['approve', 'deny']);
    }
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

describe('web page: which agents an action reaches', () => {
  const prompt = row({ state: 'blocked', detail: 'permission', agent: 'claude' });
  const byAgent = { claude: { approve: 'keys', deny: 'keys' }, gemini: { interrupt: 'keys' }, opencode: { approve: 'api', deny: 'api' } };
  const host = { ...live, actions_by_agent: byAgent };
  it('offers an action only to agents the host announced it for', () => {
    expect(rowActions(prompt, host, 'operator')).toEqual(['approve', 'deny']);
    expect(rowActions({ ...prompt, agent: 'gemini' }, host, 'operator')).toEqual([]);
    expect(rowActions({ ...prompt, agent: 'cursor' }, host, 'operator')).toEqual([]);
    expect(rowActions(row({ agent: 'gemini' }), host, 'operator')).toEqual(['interrupt']);
  });

  it('answers through an API only when the pane published the request to answer', () => {
    expect(rowActions({ ...prompt, agent: 'opencode', permission_request: null }, host, 'operator')).toEqual([]);
    expect(rowActions({ ...prompt, agent: 'opencode', permission_request: 'per_1' }, host, 'operator')).toEqual(['approve', 'deny']);
  });

  it('takes "*" for exec actions that reach any agent, and falls back to the old rule for an older host', () => {
    expect(rowActions(row({ agent: 'pi' }), { ...live, actions_by_agent: { '*': { interrupt: 'exec' } } }, 'operator')).toEqual(['interrupt']);
    expect(rowActions({ ...prompt, agent: 'gemini' }, { ...live, actions_by_agent: null }, 'operator')).toEqual(['approve', 'deny']);
  });

  it('names the agent, host and where on the button', () => {
    expect(actionLabel('approve', { agent: 'claude', host: 'build1', locator: 'proj-api:1.0', pane: '%3' })).toBe('Approve claude on build1, proj-api:1.0');
  });
});

describe('web page: ages from since_ms and the host clock offset', () => {
  const NOW = 1_800_000_000_000;
  it('counts from since on the host clock, moved onto the hub clock by the offset', () => {
    const r = row({ since_ms: NOW - 600_000 });
    expect(ageMs(r, { reachable: true, stale: false, clock_offset_ms: 0 }, NOW)).toBe(600_000);
    // A host 90 s ahead stamps its since 90 s "late": the offset takes that back out.
    const ahead = row({ since_ms: NOW + 90_000 - 600_000 });
    expect(ageMs(ahead, { reachable: true, stale: false, clock_offset_ms: 90_000 }, NOW)).toBe(600_000);
    // A host behind, not yet offset-known: never negative.
    expect(ageMs(row({ since_ms: NOW + 5000 }), undefined, NOW)).toBe(0);
    expect(ageMs(row({ since_ms: 0 }), undefined, NOW)).toBeNull();
  });

  it("stops a stale row at the host's last word", () => {
    const r = row({ since_ms: NOW - 600_000, stale: true });
    expect(ageMs(r, { reachable: false, stale: true, clock_offset_ms: 0, last_seen_ms: NOW - 60_000 }, NOW)).toBe(540_000);
  });
});

describe('web page: needs you', () => {
  it('lists blocked then done, each oldest first across hosts on the hub clock', () => {
    const hosts = new Map<string, PageHost>([
      ['a', { reachable: true, stale: false, clock_offset_ms: 0 }],
      ['b', { reachable: true, stale: false, clock_offset_ms: 60_000 }],
    ]);
    const rows = [
      row({ host: 'a', pane: '%1', state: 'blocked', since_ms: 1000 }),
      // Host b's clock runs a minute ahead: its 50 000 is the hub's -10 000, the oldest.
      row({ host: 'b', pane: '%2', state: 'blocked', since_ms: 50_000 }),
      row({ host: 'a', pane: '%3', state: 'idle', attention: true, since_ms: 0 + 1 }),
      row({ host: 'a', pane: '%4', state: 'working', since_ms: 1 }),
      row({ host: 'a', pane: '%5', state: 'idle', since_ms: 1 }),
    ];
    expect(needsYou(rows, hosts).map((r) => r.pane)).toEqual(['%2', '%1', '%3']);
  });

  it('says what is asked: the summary, else tool and detail', () => {
    expect(askText(row({ state: 'blocked', detail: 'permission', pending_tool: 'Bash', pending_summary: 'rm -rf build/' }))).toBe('rm -rf build/');
    expect(askText(row({ state: 'blocked', detail: 'permission', pending_tool: 'Bash' }))).toBe('Bash · permission');
    expect(askText(row({ state: 'idle', attention: true }))).toBe('finished its turn');
    // A host that keeps what its prompts ask says so, instead of a bare "permission".
    const keeps = { shares_prompt: false };
    expect(askText(row({ state: 'blocked', detail: 'permission' }), keeps)).toBe('not shared by this host');
    expect(askText(row({ state: 'blocked', detail: 'permission', pending_tool: 'Bash' }), keeps)).toBe('Bash · not shared by this host');
    expect(askText(row({ state: 'blocked', detail: 'permission', pending_tool: 'Bash' }), { shares_prompt: true })).toBe('Bash · permission');
    // An older collector says nothing about it: nothing is claimed.
    expect(askText(row({ state: 'blocked', detail: 'permission' }), { shares_prompt: null })).toBe('permission');
    expect(detailWord(row({ state: 'blocked', detail: 'permission' }), keeps)).toBe('not shared by this host');
    expect(detailWord(row({ state: 'working', detail: null }), keeps)).toBe(null);
  });

  it('puts the count first in the tab title', () => {
    expect(tabTitle(3)).toBe('(3) tma fleet');
    expect(tabTitle(0)).toBe('tma fleet');
  });
});

describe('web page: filters in the URL', () => {
  it('reads and writes state, host and agent lists, dropping unknown states', () => {
    const f = parseFilters('?state=blocked,bogus,done&host=build1&agent=claude,codex');
    expect(f).toEqual({ state: ['blocked', 'done'], host: ['build1'], agent: ['claude', 'codex'] });
    expect(filtersQuery(f)).toBe('?state=blocked,done&host=build1&agent=claude,codex');
    expect(filtersQuery(parseFilters(''))).toBe('');
    expect(passes(f, row({ host: 'build1', agent: 'codex', state: 'blocked' }))).toBe(true);
    expect(passes(f, row({ host: 'build1', agent: 'codex', state: 'working' }))).toBe(false);
    expect(passes(f, row({ host: 'laptop', agent: 'codex', state: 'blocked' }))).toBe(false);
  });
});

describe('web page: holding order under a finger', () => {
  it('keeps the shown order while held: leavers stay in place, newcomers go last; then settles', () => {
    const k = new OrderKeeper();
    expect(k.order(['a', 'b', 'c'], false).keys).toEqual(['a', 'b', 'c']);
    const held = k.order(['d', 'c', 'b'], true);
    expect(held.keys).toEqual(['a', 'b', 'c', 'd']);
    expect([...held.left]).toEqual(['a']);
    expect(k.order(['d', 'c', 'b'], true).keys).toEqual(['a', 'b', 'c', 'd']);
    expect(k.order(['d', 'c', 'b'], false).keys).toEqual(['d', 'c', 'b']);
  });

  it('holds while a reason stands and for a quiet period after the last one', () => {
    const h = new Hold(3000);
    expect(h.held(0)).toBe(false);
    h.touch(100);
    expect(h.held(3099)).toBe(true);
    expect(h.held(3100)).toBe(false);
    h.set('confirm', true, 5000);
    expect(h.held(60_000)).toBe(true);
    h.set('confirm', false, 60_000);
    expect(h.held(62_999)).toBe(true);
    expect(h.held(63_000)).toBe(false);
  });
});

describe('web page: reading the event stream', () => {
  it("yields each event's data once complete, skips keepalives, and keeps the unfinished tail", () => {
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

describe('the words for a prompt a host keeps', () => {
  // The page is served as written and cannot import shared/: its copy of the phrase is pinned to
  // the one the fleet CLI prints, so the two surfaces cannot drift apart.
  it('are the same on the page and in the fleet CLI', async () => {
    const page = await import('../../hub/web/format.js');
    const cli = await import('../../shared/ls-text.js');
    expect(page.NOT_SHARED).toBe(cli.NOT_SHARED);
  });
});
