// The page's mirror of a `mode=changes` stream (hub/web/changes.js, loaded here as the browser
// loads it): hand-made lines, then a real store and stream hub whose lines, applied after every
// flush, must give exactly the document `/v1/agents` would serve, in its order.

import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { HubMetrics } from '../../hub/metrics.js';
import { recordingSink } from '../support/recording-sink.js';
import { MemoryFleetStore as FleetStore } from '../../hub/store/memory-store.js';
import { StreamHub } from '../../hub/http/streams.js';
import { FleetMirror, type MirrorDocument } from '../../hub/web/changes.js';
import { EMPTY_SELECTOR } from '../../shared/selectors.js';
import type { State } from '../../shared/tokens.js';
import { EPOCH_A, SERVER, protoRow } from '../support/hub-fake-collector.js';

const r = (host: string, pane: string, state: string, locator: string, server = 's1') => ({ host, server, pane, state, locator, attention: false });
const h = (host: string, reachable = true) => ({ host, reachable, stale: !reachable, last_seen_ms: 1, servers: [] });
const changes = (over: Record<string, unknown>) => ({ schema: 1, type: 'changes', at_ms: 5, upserts: [], removals: [], hosts: [], hosts_gone: [], ...over });
const panes = (d: MirrorDocument | null) => d!.agents.map((a) => `${a.host}/${a.pane}`);

describe('web page: changes mirror', () => {
  const first = {
    schema: 1,
    agents: [r('a', '%1', 'blocked', 'x:1.0'), r('a', '%2', 'working', 'x:2.0'), r('b', '%3', 'working', 'y:1.0'), r('a', '%4', 'idle', 'x:10.0')],
    hosts: [h('a'), h('b')],
  };

  it('hands a full document on as it came', () => {
    const m = new FleetMirror();
    expect(m.apply(first)).toEqual(first);
  });

  it('places an upsert in fleet order, replaces a row by (host, server, pane), and drops removals', () => {
    const m = new FleetMirror();
    m.apply(first);
    // %2 becomes blocked: it moves up; a new pane on another server of the same host; %3 leaves.
    const d = m.apply(
      changes({
        upserts: [r('a', '%2', 'blocked', 'x:2.0'), r('a', '%2', 'idle', 'x:9.0', 's0'), r('a', '%5', 'idle', 'x:9.0')],
        removals: [{ host: 'b', server: 's1', pane: '%3' }],
      }),
    );
    expect(panes(d)).toEqual(['a/%1', 'a/%2', 'a/%2', 'a/%5', 'a/%4']);
    expect(d!.agents.map((a) => `${a.server}:${a.state}`)).toEqual(['s1:blocked', 's1:blocked', 's0:idle', 's1:idle', 's1:idle']);
    expect(d!.schema).toBe(1);
  });

  it('orders windows numerically, as the hub does', () => {
    const m = new FleetMirror();
    m.apply({ schema: 1, agents: [r('a', '%1', 'idle', 'x:2.0')], hosts: [h('a')] });
    expect(panes(m.apply(changes({ upserts: [r('a', '%9', 'idle', 'x:10.0'), r('a', '%8', 'idle', 'x:1.3')] })))).toEqual(['a/%8', 'a/%1', 'a/%9']);
  });

  it('keeps host statuses by name and sorted; a host that left takes its rows with it', () => {
    const m = new FleetMirror();
    m.apply(first);
    const d = m.apply(changes({ hosts: [h('0new'), h('b', false)], hosts_gone: ['a'] }));
    expect(d!.hosts.map((x) => `${x.host}:${String(x.reachable)}`)).toEqual(['0new:true', 'b:false']);
    expect(panes(d)).toEqual(['b/%3']);
  });

  it('a later full document replaces everything it held', () => {
    const m = new FleetMirror();
    m.apply(first);
    m.apply(changes({ upserts: [r('c', '%7', 'idle', 'z:1.0')], hosts: [h('c')] }));
    const again = { schema: 1, agents: [r('d', '%1', 'idle', 'q:1.0')], hosts: [h('d')] };
    expect(m.apply(again)).toEqual(again);
  });

  it('refuses changes before any document and ignores line types it does not draw', () => {
    expect(() => new FleetMirror().apply(changes({}))).toThrow(/before any document/);
    expect(() => new FleetMirror().apply('x')).toThrow();
    const m = new FleetMirror();
    m.apply(first);
    expect(m.apply({ schema: 1, type: 'later' })).toBeNull();
    expect(m.document()).toEqual(first);
  });
});

const HELLO = { transport: 'ws' as const, epoch: EPOCH_A, collectorVersion: '1', actionsAllowed: [] };
const STATES: State[] = ['blocked', 'working', 'idle', 'unknown'];

describe('web page: changes mirror against the hub', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('after every flush the mirror equals the fleet document, order included', () => {
    const store = new FleetStore({ clock: () => 5000 });
    const owners = new Map<string, object>();
    const seq = new Map<string, number>();
    const names = ['m', 'b', 'x'];
    const hub = new StreamHub(store, { coalesceMs: 50, keepaliveMs: 60_000, logger: pino({ level: 'silent' }), metrics: new HubMetrics(), clock: () => 42 });
    const written: string[] = [];
    hub.add(() => recordingSink(written), EMPTY_SELECTOR, 'changes');
    const mirror = new FleetMirror();
    let x = 11;
    const rnd = () => (x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const connect = (host: string) => {
      const o = {};
      owners.set(host, o);
      store.hello(host, HELLO, o);
      seq.set(host, 1);
      const rows = Array.from({ length: 5 }, (_, i) => protoRow({ pane: `%${i}`, locator: `s:${i * 5}.0`, state: STATES[i % 4] }));
      store.applySnapshot(host, o, { epoch: EPOCH_A, seq: 1, complete: true, servers: [{ server: SERVER, incarnation: 'i', rows }] });
    };
    const strip = (d: { agents: unknown[]; hosts: unknown[] }) => ({ agents: d.agents, hosts: d.hosts.map((y) => ({ ...(y as object), last_seen_ms: 0 })) });
    let kinds = new Set<string>();
    for (let round = 0; round < 120; round++) {
      const host = names[Math.floor(rnd() * names.length)]!;
      const k = rnd();
      if (!owners.has(host)) connect(host);
      else if (k < 0.6) {
        const pane = `%${Math.floor(rnd() * 8)}`;
        const n = seq.get(host)! + 1;
        seq.set(host, n);
        const row = protoRow({ pane, locator: `s:${Math.floor(rnd() * 12)}.0`, state: STATES[Math.floor(rnd() * 4)], attention: rnd() < 0.3 });
        store.applyDelta(host, owners.get(host)!, { epoch: EPOCH_A, seq: n, server: SERVER, incarnation: 'i', upserts: [row], removals: [] });
      } else if (k < 0.75) {
        const n = seq.get(host)! + 1;
        seq.set(host, n);
        store.applyDelta(host, owners.get(host)!, {
          epoch: EPOCH_A,
          seq: n,
          server: SERVER,
          incarnation: 'i',
          upserts: [],
          removals: [`%${Math.floor(rnd() * 8)}`],
        });
      } else if (k < 0.85) store.linkDown(host, owners.get(host)!, 'closed');
      else {
        store.linkDown(host, owners.get(host)!, 'closed');
        store.forget(host);
        owners.delete(host);
      }
      vi.advanceTimersByTime(100);
      for (const line of written.splice(0)) {
        const msg = JSON.parse(line);
        kinds = new Set([...kinds, msg.type ?? 'document', ...(msg.hosts_gone?.length ? ['gone'] : []), ...(msg.removals?.length ? ['removal'] : [])]);
        mirror.apply(msg);
      }
      expect(strip(mirror.document())).toEqual(strip(store.document(EMPTY_SELECTOR)));
    }
    // The walk really went through every kind of line.
    expect(kinds).toEqual(new Set(['document', 'changes', 'gone', 'removal']));
    hub.close();
  });
});
