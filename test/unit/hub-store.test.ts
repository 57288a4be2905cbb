import { describe, expect, it } from 'vitest';
import { FLEET_ROW_KEYS, HOST_STATUS_KEYS } from '../../shared/fleet.js';
import { EMPTY_SELECTOR } from '../../shared/selectors.js';
import { MemoryFleetStore as FleetStore } from '../../hub/store/memory-store.js';
import { EPOCH_A, EPOCH_B, SERVER, protoRow } from '../support/hub-fake-collector.js';

const HELLO = { transport: 'ws' as const, epoch: EPOCH_A, collectorVersion: '1', actionsAllowed: [] };

function setup(now = { t: 1000 }) {
  const store = new FleetStore({ clock: () => now.t, lostAfterMs: 10_000 });
  const owner = {};
  return { store, owner, now };
}

function snap(seq: number, rows = [protoRow()], o: { epoch?: string; complete?: boolean; server?: string; incarnation?: string } = {}) {
  return {
    epoch: o.epoch ?? EPOCH_A,
    seq,
    complete: o.complete ?? true,
    servers: [{ server: o.server ?? SERVER, incarnation: o.incarnation ?? 'inc1', rows }],
  };
}

function delta(seq: number, upserts = [protoRow()], removals: string[] = [], o: { epoch?: string; incarnation?: string } = {}) {
  return { epoch: o.epoch ?? EPOCH_A, seq, server: SERVER, incarnation: o.incarnation ?? 'inc1', upserts, removals };
}

const panes = (s: FleetStore) => s.rows().map((r) => `${r.host}/${r.pane}/${r.state}`);

describe('fleet store: snapshots', () => {
  it("replaces a host's rows only when the snapshot completes", () => {
    const { store, owner } = setup();
    store.hello('b1', HELLO, owner);
    expect(store.applySnapshot('b1', owner, snap(3, [protoRow({ pane: '%1' })]))).toEqual({ ok: true, applied: true });
    expect(panes(store)).toEqual(['b1/%1/working']);
    store.applySnapshot('b1', owner, snap(7, [protoRow({ pane: '%2' })], { complete: false }));
    expect(panes(store)).toEqual(['b1/%1/working']);
    store.applySnapshot('b1', owner, snap(7, [protoRow({ pane: '%3' })], { complete: true }));
    expect(panes(store)).toEqual(['b1/%2/working', 'b1/%3/working']);
  });

  it('binds host and server on every row to the session, whatever the row says', () => {
    const { store, owner } = setup();
    store.hello('b1', HELLO, owner);
    store.applySnapshot('b1', owner, snap(1, [protoRow({ host: 'laptop', server: '/elsewhere' })]));
    expect(store.rows()[0]).toMatchObject({ host: 'b1', server: SERVER });
  });

  it('a fresh hello keeps old rows stale until the new snapshot completes', () => {
    const { store, owner } = setup();
    store.hello('b1', HELLO, owner);
    store.applySnapshot('b1', owner, snap(1));
    const o2 = {};
    expect(store.hello('b1', { ...HELLO, epoch: EPOCH_B }, o2).resumeFrom).toBeNull();
    expect(store.rows().map((r) => r.stale)).toEqual([true]);
    store.applySnapshot('b1', o2, snap(1, [protoRow({ pane: '%9' })], { epoch: EPOCH_B }));
    expect(store.rows().map((r) => [r.pane, r.stale])).toEqual([['%9', false]]);
  });
});

describe('fleet store: deltas and sequence', () => {
  it('applies the next sequence, refuses a gap, skips an already applied one', () => {
    const { store, owner } = setup();
    store.hello('b1', HELLO, owner);
    store.applySnapshot('b1', owner, snap(5));
    expect(store.applyDelta('b1', owner, delta(5, [protoRow({ state: 'idle' })]))).toEqual({ ok: true, applied: false });
    expect(panes(store)).toEqual(['b1/%1/working']);
    expect(store.applyDelta('b1', owner, delta(7))).toMatchObject({ ok: false, code: 'gap' });
    expect(store.applyDelta('b1', owner, delta(6, [protoRow({ state: 'blocked' })]))).toEqual({ ok: true, applied: true });
    expect(panes(store)).toEqual(['b1/%1/blocked']);
    expect(store.applyDelta('b1', owner, delta(7, [], ['%1']))).toEqual({ ok: true, applied: true });
    expect(panes(store)).toEqual([]);
  });

  it('refuses a delta before any snapshot, for an unknown incarnation, or another epoch', () => {
    const { store, owner } = setup();
    store.hello('b1', HELLO, owner);
    expect(store.applyDelta('b1', owner, delta(1))).toMatchObject({ ok: false, code: 'no-baseline' });
    store.applySnapshot('b1', owner, snap(1));
    expect(store.applyDelta('b1', owner, delta(2, [], [], { incarnation: 'inc2' }))).toMatchObject({ ok: false, code: 'unknown-incarnation' });
    expect(store.applyDelta('b1', owner, delta(2, [], [], { epoch: EPOCH_B }))).toMatchObject({ ok: false, code: 'epoch' });
    expect(panes(store)).toEqual(['b1/%1/working']);
  });

  it('ignores writes from a replaced session', () => {
    const { store, owner } = setup();
    store.hello('b1', HELLO, owner);
    store.applySnapshot('b1', owner, snap(1));
    const newer = {};
    store.hello('b1', HELLO, newer);
    expect(store.applyDelta('b1', owner, delta(2, [protoRow({ state: 'idle' })]))).toMatchObject({ ok: false, code: 'not-owner' });
    store.linkDown('b1', owner, 'old link closed');
    expect(store.hostStatuses()[0]).toMatchObject({ reachable: true, stale: false });
  });

  it('requireSnapshot keeps rows but marks them stale until a snapshot completes', () => {
    const { store, owner } = setup();
    store.hello('b1', HELLO, owner);
    store.applySnapshot('b1', owner, snap(1));
    store.requireSnapshot('b1', owner);
    expect(store.rows().map((r) => r.stale)).toEqual([true]);
    expect(store.applyDelta('b1', owner, delta(2))).toMatchObject({ ok: false, code: 'no-baseline' });
    store.applySnapshot('b1', owner, snap(4));
    expect(store.rows().map((r) => r.stale)).toEqual([false]);
  });
});

describe('fleet store: server frames', () => {
  const sf = (seq: number, event: 'appeared' | 'incarnation' | 'gone', incarnation = 'inc1') => ({ epoch: EPOCH_A, seq, event, server: SERVER, incarnation });

  it('a new incarnation drops the old rows; gone drops the server', () => {
    const { store, owner } = setup();
    store.hello('b1', HELLO, owner);
    store.applySnapshot('b1', owner, snap(1, [protoRow({ pane: '%1' }), protoRow({ pane: '%2' })]));
    store.applyServer('b1', owner, sf(2, 'appeared', 'inc1'));
    expect(panes(store)).toHaveLength(2);
    store.applyServer('b1', owner, sf(3, 'incarnation', 'inc2'));
    expect(panes(store)).toEqual([]);
    expect(store.applyDelta('b1', owner, delta(4, [protoRow({ pane: '%1' })], [], { incarnation: 'inc2' }))).toMatchObject({ ok: true });
    expect(store.hostStatuses()[0]!.servers).toEqual([{ server: SERVER, incarnation: 'inc2', rows: 1 }]);
    store.applyServer('b1', owner, sf(5, 'gone', 'inc2'));
    expect(store.hostStatuses()[0]!.servers).toEqual([]);
    expect(store.applyServer('b1', owner, sf(7, 'appeared'))).toMatchObject({ ok: false, code: 'gap' });
  });
});

describe('fleet store: dead links, lost hosts, forget', () => {
  it('a dead link keeps rows as they were, marked stale, with last seen', () => {
    const { store, owner, now } = setup();
    store.hello('b1', HELLO, owner);
    store.applySnapshot('b1', owner, snap(1, [protoRow({ state: 'working' })]));
    now.t = 4000;
    store.touch('b1', owner);
    now.t = 9000;
    store.linkDown('b1', owner, 'silent');
    expect(store.rows().map((r) => [r.state, r.stale])).toEqual([['working', true]]);
    expect(store.hostStatuses()[0]).toMatchObject({ reachable: false, stale: true, last_seen_ms: 4000, reason: 'silent' });
  });

  it('shows a host as lost exactly when it has been silent for lost_after', () => {
    const { store, owner, now } = setup();
    store.hello('b1', HELLO, owner);
    store.linkDown('b1', owner, 'closed');
    now.t = 1000 + 9_999;
    store.sweep();
    expect(store.hostStatuses()[0]!.reason).toBe('closed');
    now.t = 1000 + 10_000;
    store.sweep();
    expect(store.hostStatuses()[0]!.reason).toBe('lost');
    now.t = 1000 + 10_001;
    store.sweep();
    expect(store.hostStatuses()[0]!.reason).toBe('lost');
  });

  it('forget removes an unreachable host and refuses a connected one', () => {
    const { store, owner } = setup();
    store.hello('b1', HELLO, owner);
    store.applySnapshot('b1', owner, snap(1));
    expect(store.forget('b1')).toBe(false);
    store.linkDown('b1', owner, 'closed');
    expect(store.forget('b1')).toBe(true);
    expect(store.document()).toEqual({ schema: 1, agents: [], hosts: [] });
  });

  it('a declared host shows before it ever connects, unreachable and never seen', () => {
    const { store } = setup();
    store.declare('quiet', 'ssh');
    expect(store.hostStatuses()).toEqual([
      {
        host: 'quiet',
        transport: 'ssh',
        reachable: false,
        stale: true,
        last_seen_ms: null,
        reason: null,
        collector_version: null,
        servers: [],
        actions_allowed: [],
        schema: 1,
        last_refusal: null,
        clock_offset_ms: null,
        actions_by_agent: null,
        shares_prompt: null,
      },
    ]);
  });
});

describe('fleet store: documents and changes', () => {
  it('orders rows by state rank, host, server, locator and filters by selector', () => {
    const { store } = setup();
    const a = {};
    const b = {};
    store.hello('zeta', HELLO, a);
    store.hello('alpha', HELLO, b);
    store.applySnapshot('zeta', a, snap(1, [protoRow({ pane: '%1', state: 'blocked' }), protoRow({ pane: '%2', state: 'idle', locator: 'main:2.0' })]));
    store.applySnapshot('alpha', b, snap(1, [protoRow({ pane: '%1', state: 'idle', locator: 'main:3.0' }), protoRow({ pane: '%4', state: 'blocked' })]));
    expect(panes(store)).toEqual(['alpha/%4/blocked', 'zeta/%1/blocked', 'alpha/%1/idle', 'zeta/%2/idle']);
    const doc = store.document({ ...EMPTY_SELECTOR, host: 'zeta', states: ['idle'] });
    expect(doc.agents.map((r) => r.pane)).toEqual(['%2']);
    expect(doc.hosts.map((h) => h.host)).toEqual(['zeta']);
  });

  it('pins the key sets of the document, host status and rows', () => {
    const { store, owner } = setup();
    store.hello('b1', HELLO, owner);
    store.applySnapshot('b1', owner, snap(1));
    const doc = store.document();
    expect(Object.keys(doc)).toEqual(['schema', 'agents', 'hosts']);
    expect(Object.keys(doc.hosts[0]!)).toEqual([...HOST_STATUS_KEYS]);
    expect(Object.keys(doc.agents[0]!)).toEqual([...FLEET_ROW_KEYS]);
  });

  it('shows each host the actions its latest hello allows, and none before any hello', () => {
    const { store, owner } = setup();
    store.declare('quiet', 'ws');
    store.hello('b1', { ...HELLO, actionsAllowed: ['approve', 'deny'] }, owner);
    const allowed = () => Object.fromEntries(store.hostStatuses().map((h) => [h.host, h.actions_allowed]));
    expect(allowed()).toEqual({ b1: ['approve', 'deny'], quiet: [] });
    store.hello('b1', { ...HELLO, actionsAllowed: ['interrupt'] }, {});
    expect(allowed()).toEqual({ b1: ['interrupt'], quiet: [] });
  });

  it('keeps each host its announced per-agent actions and its clock offset from hello, then heartbeats', () => {
    const { store, owner } = setup({ t: 1_800_000_000_000 });
    const now = 1_800_000_000_000;
    const byAgent = { claude: { approve: 'keys' as const }, opencode: { approve: 'api' as const } };
    // A host whose clock runs 90 s ahead of the hub's.
    store.hello('b1', { ...HELLO, actionsByAgent: byAgent, at: now + 90_000 }, owner);
    const b1 = () => store.hostStatuses().find((h) => h.host === 'b1')!;
    expect(b1().clock_offset_ms).toBe(90_000);
    expect(b1().actions_by_agent).toEqual(byAgent);
    store.noteHeartbeat('b1', owner, now - 3_000, 1);
    expect(b1().clock_offset_ms).toBe(-3_000);
    // An older collector's hello says neither.
    store.hello('b1', HELLO, {});
    expect(b1().clock_offset_ms).toBeNull();
    expect(b1().actions_by_agent).toBeNull();
  });

  it('emits one change per applied frame and none for a refused or partial one', () => {
    const { store, owner } = setup();
    const seen: number[] = [];
    store.onChange((c) => seen.push(c.version));
    store.hello('b1', HELLO, owner);
    store.applySnapshot('b1', owner, snap(1, [], { complete: false }));
    expect(seen).toHaveLength(1);
    store.applySnapshot('b1', owner, snap(1));
    store.applyDelta('b1', owner, delta(3));
    store.applyDelta('b1', owner, delta(2));
    expect(seen).toEqual([1, 2, 3]);
  });
});
