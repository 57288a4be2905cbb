import { describe, expect, it } from 'vitest';
import { diffEdges, EDGE_KEYS, type EdgeRow } from '../../shared/edges.js';
import type { AgentRow } from '../../shared/row.js';
import type { State } from '../../shared/tokens.js';
import { parseInterval, StreamState } from '../../cli/verbs/subscribe.js';
import { UsageError } from '../../cli/args.js';

function er(pane: string, state: State, extra: Partial<EdgeRow> = {}): EdgeRow {
  return {
    pane,
    agent: 'claude',
    state,
    attention: false,
    detail: null,
    locator: `main:${pane.slice(1)}.0`,
    repo: null,
    branch: null,
    host: 'h1',
    server: '/tmp/tmux-0/default',
    ...extra,
  };
}

function agentRow(pane: string, state: State, extra: Partial<AgentRow> = {}): AgentRow {
  return {
    pane,
    agent: 'claude',
    state,
    detail: null,
    since: 1,
    since_ms: 1,
    episode_ms: 1,
    locator: `main:${pane.slice(1)}.0`,
    title: 't',
    attention: false,
    done: false,
    session: null,
    transcript: null,
    permission_request: null,
    stamped_at_ms: 1,
    context: null,
    context_at_ms: null,
    muted: false,
    tokens: null,
    quota: null,
    cost_usd: null,
    repo: null,
    branch: null,
    worktree: null,
    pending_tool: null,
    pending_call: null,
    pending_summary: null,
    server: '/s',
    host: 'h1',
    ...extra,
  };
}

describe('diffEdges', () => {
  it('emits nothing when no class changed, even if detail, title or locator moved', () => {
    expect(diffEdges([er('%1', 'blocked')], [er('%1', 'blocked', { detail: 'permission', locator: 'x:1.1' })], 5)).toEqual([]);
  });

  it('reads classes disjointly: idle gaining attention is an idle→done edge', () => {
    const [e] = diffEdges([er('%1', 'idle')], [er('%1', 'idle', { attention: true })], 5);
    expect(e).toMatchObject({ from: 'idle', to: 'done' });
    expect(diffEdges([er('%1', 'idle', { attention: true })], [er('%1', 'idle')], 5)[0]).toMatchObject({ from: 'done', to: 'idle' });
  });

  it('opens appearances with "" and closes departures with "" carrying the last row', () => {
    const gone = er('%2', 'working', { detail: 'x', repo: 'r', branch: 'b' });
    const edges = diffEdges([gone], [er('%3', 'blocked', { detail: 'permission' })], 9);
    expect(edges).toEqual([
      {
        schema: 1,
        at_ms: 9,
        pane: '%3',
        agent: 'claude',
        from: '',
        to: 'blocked',
        detail: 'permission',
        locator: 'main:3.0',
        repo: null,
        branch: null,
        host: 'h1',
        server: '/tmp/tmux-0/default',
      },
      {
        schema: 1,
        at_ms: 9,
        pane: '%2',
        agent: 'claude',
        from: 'working',
        to: '',
        detail: 'x',
        locator: 'main:2.0',
        repo: 'r',
        branch: 'b',
        host: 'h1',
        server: '/tmp/tmux-0/default',
      },
    ]);
  });

  it('orders new-cycle rows first (in their order), then departures in the previous order', () => {
    const prev = [er('%1', 'working'), er('%2', 'working'), er('%3', 'working'), er('%4', 'working')];
    const next = [er('%5', 'idle'), er('%3', 'blocked'), er('%1', 'idle')];
    expect(diffEdges(prev, next, 1).map((e) => `${e.pane}:${e.from}>${e.to}`)).toEqual([
      '%5:>idle',
      '%3:working>blocked',
      '%1:working>idle',
      '%2:working>',
      '%4:working>',
    ]);
  });

  it('keys rows by (host, server, pane): the same pane id on another server is another row', () => {
    const edges = diffEdges([er('%1', 'idle', { server: '/a' })], [er('%1', 'idle', { server: '/b' })], 1);
    expect(edges.map((e) => `${e.server}:${e.from}>${e.to}`)).toEqual(['/b:>idle', '/a:idle>']);
    const hosts = diffEdges([er('%1', 'idle', { host: 'a' })], [er('%1', 'idle', { host: 'b' })], 1);
    expect(hosts).toHaveLength(2);
  });

  it('puts the keys in contract order with host and server last', () => {
    const [e] = diffEdges([], [er('%1', 'idle')], 1);
    expect(Object.keys(e!)).toEqual([...EDGE_KEYS]);
    expect(EDGE_KEYS.slice(0, 10)).toEqual(['schema', 'at_ms', 'pane', 'agent', 'from', 'to', 'detail', 'locator', 'repo', 'branch']);
  });
});

describe('subscribe stream lines', () => {
  it('events: the first cycle is a silent baseline, later cycles emit one line per edge', () => {
    const s = new StreamState({ events: true, changesOnly: false });
    expect(s.next([agentRow('%1', 'working')], 10)).toEqual([]);
    expect(s.next([agentRow('%1', 'working')], 11)).toEqual([]);
    const lines = s.next([agentRow('%1', 'idle', { attention: true })], 12);
    expect(lines.map((l) => JSON.parse(l))).toEqual([
      {
        schema: 1,
        at_ms: 12,
        pane: '%1',
        agent: 'claude',
        from: 'working',
        to: 'done',
        detail: null,
        locator: 'main:1.0',
        repo: null,
        branch: null,
        host: 'h1',
        server: '/s',
      },
    ]);
  });

  it('events ignore --changes-only (edges are changes already)', () => {
    const s = new StreamState({ events: true, changesOnly: true });
    s.next([], 1);
    expect(s.next([agentRow('%1', 'idle')], 2)).toHaveLength(1);
  });

  it('snapshots: the first line always, then every cycle, or only on change with --changes-only', () => {
    const every = new StreamState({ events: false, changesOnly: false });
    const rows = [agentRow('%1', 'idle')];
    const first = every.next(rows, 1);
    expect(first).toHaveLength(1);
    expect(JSON.parse(first[0]!)).toMatchObject({ schema: 1, agents: [{ pane: '%1', state: 'idle' }] });
    expect(every.next(rows, 2)).toEqual(first);

    const changes = new StreamState({ events: false, changesOnly: true });
    expect(changes.next([], 1)).toEqual(['{"schema":1,"agents":[]}']);
    expect(changes.next([], 2)).toEqual([]);
    expect(changes.next(rows, 3)).toHaveLength(1);
    expect(changes.next(rows, 4)).toEqual([]);
  });

  it('--interval: 1 is the least allowed, a hair under is refused', () => {
    expect(parseInterval(undefined)).toBe(1000);
    expect(parseInterval('1')).toBe(1000);
    expect(parseInterval('1.5')).toBe(1500);
    expect(() => parseInterval('0.999')).toThrow(UsageError);
    expect(() => parseInterval('0')).toThrow(UsageError);
    expect(() => parseInterval('-2')).toThrow(UsageError);
  });
});
