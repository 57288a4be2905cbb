import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { HubMetrics } from '../../hub/metrics.js';
import { recordingSink } from '../support/recording-sink.js';
import { MemoryFleetStore as FleetStore } from '../../hub/store/memory-store.js';
import { StreamHub, type StreamMode } from '../../hub/http/streams.js';
import { diffEdges } from '../../shared/edges.js';
import { EMPTY_SELECTOR, type Selector } from '../../shared/selectors.js';
import type { State } from '../../shared/tokens.js';
import { EPOCH_A, SERVER, protoRow } from '../support/hub-fake-collector.js';

const HELLO = { transport: 'ws' as const, epoch: EPOCH_A, collectorVersion: '1', actionsAllowed: [] };
const STATES: State[] = ['blocked', 'working', 'idle', 'unknown'];

/** A small deterministic generator, so a failure replays. */
function rng(seed: number) {
  let x = seed;
  return () => (x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
}

function fleet(hosts: string[]) {
  const store = new FleetStore({ clock: () => 5000 });
  const owners = new Map<string, object>();
  const seq = new Map<string, number>();
  for (const h of hosts) {
    const o = {};
    owners.set(h, o);
    store.hello(h, HELLO, o);
    const rows = Array.from({ length: 6 }, (_, i) => protoRow({ pane: `%${i}`, locator: `s:${i}.0`, state: STATES[i % 4] }));
    store.applySnapshot(h, o, { epoch: EPOCH_A, seq: 1, complete: true, servers: [{ server: SERVER, incarnation: 'i', rows }] });
    seq.set(h, 1);
  }
  const delta = (h: string, upserts: ReturnType<typeof protoRow>[], removals: string[] = []) => {
    const n = seq.get(h)! + 1;
    seq.set(h, n);
    return store.applyDelta(h, owners.get(h)!, { epoch: EPOCH_A, seq: n, server: SERVER, incarnation: 'i', upserts, removals });
  };
  return { store, owners, delta };
}

function randomStep(f: ReturnType<typeof fleet>, hosts: string[], r: () => number): void {
  const h = hosts[Math.floor(r() * hosts.length)]!;
  const pane = `%${Math.floor(r() * 8)}`;
  const k = r();
  if (k < 0.7) {
    f.delta(h, [protoRow({ pane, locator: `s:${pane.slice(1)}.0`, state: STATES[Math.floor(r() * 4)], attention: r() < 0.3, repo: r() < 0.5 ? 'a' : 'b' })]);
  } else if (k < 0.85) f.delta(h, [], [pane]);
  else if (k < 0.93) f.store.linkDown(h, f.owners.get(h)!, 'closed');
  else {
    const o = {};
    f.owners.set(h, o);
    f.store.hello(h, HELLO, o);
  }
}

describe('incremental fleet store', () => {
  it('its document text is exactly the JSON of its document, for every selector, through random changes', () => {
    const hosts = ['m', 'a', 'z', 'k'];
    const f = fleet(hosts);
    const r = rng(7);
    const selectors: Selector[] = [
      EMPTY_SELECTOR,
      { ...EMPTY_SELECTOR, host: 'k' },
      { ...EMPTY_SELECTOR, states: ['done', 'blocked'] },
      { ...EMPTY_SELECTOR, repo: 'a', host: 'z' },
      { ...EMPTY_SELECTOR, host: 'absent' },
    ];
    for (let i = 0; i < 150; i++) {
      randomStep(f, hosts, r);
      for (const s of selectors) expect(f.store.documentText(s)).toBe(JSON.stringify(f.store.document(s)));
    }
  }, 30_000);

  it('journals only rows whose text or staleness moved; a repeated row is no change', () => {
    const f = fleet(['b1']);
    f.store.setJournaling(true);
    f.delta('b1', [protoRow({ pane: '%0', locator: 's:0.0', state: 'blocked' })]);
    expect(f.store.takeChanges()).toEqual({ rows: [], hosts: [] });
    f.delta('b1', [protoRow({ pane: '%0', locator: 's:0.0', state: 'idle' })]);
    f.delta('b1', [protoRow({ pane: '%0', locator: 's:0.0', state: 'blocked' })]);
    expect(f.store.takeChanges().rows).toEqual([]); // changed and changed back within one flush
    f.store.linkDown('b1', f.owners.get('b1')!, 'closed');
    const c = f.store.takeChanges();
    expect(c.hosts).toEqual(['b1']);
    expect(c.rows).toHaveLength(6);
    expect(c.rows.every((x) => x.before?.stale === false && x.after?.stale === true)).toBe(true);
  });
});

function streamHubOn(store: FleetStore): StreamHub {
  return new StreamHub(store, { coalesceMs: 50, keepaliveMs: 60_000, logger: pino({ level: 'silent' }), metrics: new HubMetrics(), clock: () => 42 });
}

describe('stream modes over the incremental store', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  function join(store: FleetStore, hub: StreamHub, mode: StreamMode, sel: Selector = EMPTY_SELECTOR) {
    const written: string[] = [];
    hub.add(() => recordingSink(written), sel, mode);
    return written;
  }

  it('events: the edges a full diff of the selected rows would give, in its order', () => {
    const hosts = ['h1', 'h2', 'h3'];
    const f = fleet(hosts);
    const hub = streamHubOn(f.store);
    const sels: Selector[] = [EMPTY_SELECTOR, { ...EMPTY_SELECTOR, states: ['blocked', 'done'] }, { ...EMPTY_SELECTOR, host: 'h2' }];
    const outs = sels.map((s) => join(f.store, hub, 'events', s));
    const r = rng(3);
    for (let round = 0; round < 80; round++) {
      const before = sels.map((s) => f.store.document(s).agents);
      const seen = outs.map((o) => o.length);
      const n = 1 + Math.floor(r() * 4);
      for (let i = 0; i < n; i++) randomStep(f, hosts, r);
      vi.advanceTimersByTime(100);
      sels.forEach((s, i) => {
        const want = diffEdges(before[i]!, f.store.document(s).agents, 42).map((e) => JSON.stringify(e));
        expect(outs[i]!.slice(seen[i])).toEqual(want);
      });
    }
    hub.close();
  });

  it('changes: the document once, then lines that, applied, rebuild the same document', () => {
    const hosts = ['h1', 'h2', 'h3'];
    const f = fleet(hosts);
    const hub = streamHubOn(f.store);
    const sel: Selector = { ...EMPTY_SELECTOR, states: ['working', 'blocked'] };
    const out = join(f.store, hub, 'changes', sel);
    const r = rng(5);
    for (let round = 0; round < 80; round++) {
      const n = 1 + Math.floor(r() * 4);
      for (let i = 0; i < n; i++) randomStep(f, hosts, r);
      vi.advanceTimersByTime(100);
    }
    // Replay the stream as a page would.
    const rows = new Map<string, Record<string, unknown>>();
    const hostMap = new Map<string, unknown>();
    const key = (x: { host: unknown; server: unknown; pane: unknown }) => `${String(x.host)}|${String(x.server)}|${String(x.pane)}`;
    for (const line of out) {
      const m = JSON.parse(line);
      if (m.type === undefined) {
        rows.clear();
        hostMap.clear();
        for (const a of m.agents) rows.set(key(a), a);
        for (const h of m.hosts) hostMap.set(h.host, h);
        continue;
      }
      expect(Object.keys(m)).toEqual(['schema', 'type', 'at_ms', 'upserts', 'removals', 'hosts', 'hosts_gone']);
      for (const u of m.upserts) rows.set(key(u), u);
      for (const x of m.removals) rows.delete(key(x));
      for (const h of m.hosts) hostMap.set(h.host, h);
      for (const h of m.hosts_gone) hostMap.delete(h);
    }
    const doc = f.store.document(sel);
    const strip = (h: unknown) => ({ ...(h as object), last_seen_ms: 0 });
    expect(new Set(rows.keys())).toEqual(new Set(doc.agents.map(key)));
    for (const a of doc.agents) expect(rows.get(key(a))).toEqual(a);
    expect([...hostMap.values()].map(strip)).toEqual(expect.arrayContaining(doc.hosts.map(strip)));
    expect(out.length).toBeGreaterThan(10);
    hub.close();
  });

  it('a changes reader that falls behind is paused, then sent a fresh document once it catches up', () => {
    const f = fleet(['h1']);
    const hub = streamHubOn(f.store);
    const written: string[] = [];
    let drained = false;
    let slow: (reason: string) => void = () => {};
    hub.add((s) => ((slow = s), recordingSink(written, () => drained)), EMPTY_SELECTOR, 'changes');
    expect(written).toHaveLength(1);
    slow('backlog');
    for (let i = 0; i < 20; i++) {
      f.delta('h1', [protoRow({ pane: '%0', locator: 's:0.0', state: i % 2 ? 'idle' : 'blocked' })]);
      vi.advanceTimersByTime(60);
    }
    expect(written).toHaveLength(1); // nothing queued while behind
    drained = true;
    vi.advanceTimersByTime(250);
    expect(written).toHaveLength(2);
    expect(written[1]).toBe(f.store.documentText());
    f.delta('h1', [protoRow({ pane: '%0', locator: 's:0.0', state: 'unknown' })]);
    vi.advanceTimersByTime(60);
    expect(JSON.parse(written[2]!)).toMatchObject({ type: 'changes', upserts: [{ pane: '%0', state: 'unknown' }] });
    hub.close();
  });

  it('subscribers sharing a selector get the same changes line from one flush', () => {
    const f = fleet(['h1']);
    const hub = streamHubOn(f.store);
    const outs = Array.from({ length: 5 }, () => join(f.store, hub, 'changes'));
    f.delta('h1', [protoRow({ pane: '%0', locator: 's:0.0', state: 'idle' })]);
    vi.advanceTimersByTime(10);
    const lines = outs.map((o) => o[1]);
    expect(new Set(lines).size).toBe(1);
    expect(lines[0]).toContain('"type":"changes"');
    hub.close();
  });
});
