// Ownership under faults, on a real nats-server (issue 32): hub writes that land at the server but
// whose replies are lost or late, and a stalled event loop, must neither hand a host to another
// hub ("another hub took over this host") nor leave one silently unshown; and what ownership
// costs at rest is a write per hub, not one per host.

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import { startNats, TEST_FLEET_KEY, type NatsNode } from '../support/nats-server.js';
import { FakeCollector, protoRow } from '../support/hub-fake-collector.js';
import { startTestHub, testConfig, type TestHub } from '../support/hub-harness.js';
import { sleep, when } from '../support/when.js';

const HOSTS = Array.from({ length: 20 }, (_, i) => ({ host: `h${i}`, token: `tok-h${i}-0123456789` }));
let nats: NatsNode;
const hubs: TestHub[] = [];
const collectors: FakeCollector[] = [];

beforeAll(async () => {
  nats = await startNats();
});
afterAll(() => nats?.stop());
afterEach(async () => {
  for (const c of collectors.splice(0)) c.ws.terminate();
  for (const h of hubs.splice(0)) await h.close();
  const nc = await connect({ servers: nats.url });
  const jsm = await jetstreamManager(nc);
  for (const s of ['KV_tma-rows', 'KV_tma-hosts', 'KV_tma-slots']) await jsm.streams.delete(s).catch(() => undefined);
  await nc.close();
});

async function hub(leaseMs: number): Promise<TestHub> {
  const h = await startTestHub({ config: testConfig({ collectors: HOSTS, nats: { servers: [nats.url], replicas: 1, leaseMs, fleetKey: TEST_FLEET_KEY } }) });
  hubs.push(h);
  return h;
}

async function linkAll(h: TestHub): Promise<FakeCollector[]> {
  const out: FakeCollector[] = [];
  for (const { host, token } of HOSTS) {
    const c = await FakeCollector.connect(h.url, token);
    collectors.push(c);
    c.hello(host);
    const f = await c.next((x) => x.type === 'welcome' || x.type === 'error');
    expect(f.type).toBe('welcome');
    c.snapshot(1, [protoRow({ pane: '%1', host })]);
    const beat = setInterval(() => (c.ws.readyState === c.ws.OPEN ? c.heartbeat() : clearInterval(beat)), 100);
    c.ws.on('close', () => clearInterval(beat));
    out.push(c);
  }
  return out;
}

interface HostDoc {
  host: string;
  reachable: boolean;
  stale: boolean;
  reason: string | null;
}
const hostsOf = async (h: TestHub): Promise<HostDoc[]> => ((await (await h.get('/v1/agents')).json()) as { hosts: HostDoc[] }).hosts;
const allFresh = (hs: HostDoc[]) => HOSTS.every(({ host }) => hs.some((x) => x.host === host && x.reachable && !x.stale));

/** The hub's hosts bucket, as its store writes it (a test reaches into the store for the fault). */
const hostsKv = (h: TestHub): KV => (h.store as unknown as { b: { hosts: KV } }).b.hosts;

/** Make every write of `kv` land at the server, then fail at the client (lost reply) or answer late. */
function injectFault(kv: KV, fault: { lose: boolean; delayMs: number }): () => void {
  const names = ['put', 'update', 'create'] as const;
  const orig = names.map((n) => kv[n].bind(kv));
  names.forEach((n, i) => {
    (kv as unknown as Record<string, unknown>)[n] = async (...args: unknown[]) => {
      const r = await (orig[i] as (...a: unknown[]) => Promise<number>)(...args);
      if (fault.delayMs) await sleep(fault.delayMs);
      if (fault.lose) throw new Error('TIMEOUT');
      return r;
    };
  });
  return () => names.forEach((n, i) => ((kv as unknown as Record<string, unknown>)[n] = orig[i]));
}

/** Over `ms`, sample that `b` shows every host of `a` fresh, and that no link of `a` closed. */
async function holdsThrough(b: TestHub, links: FakeCollector[], ms: number): Promise<{ notFresh: number; closed: string[] }> {
  let notFresh = 0;
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (!allFresh(await hostsOf(b))) notFresh++;
    await sleep(100);
  }
  return { notFresh, closed: links.filter((c) => c.closeCode !== null).map((c) => c.closeReason) };
}

describe('NATS ownership under faults', () => {
  it('costs a few claim and liveness writes a second for a hub holding 20 hosts, not one per host', async () => {
    const a = await hub(1500);
    await linkAll(a);
    const nc = await connect({ servers: nats.url });
    try {
      let n = 0;
      const sub = nc.subscribe('$KV.tma-hosts.>', {
        callback: (_e, m) => {
          if (/^\$KV\.tma-hosts\.[ol]\./.test(m.subject)) n++;
        },
      });
      await sleep(3000);
      sub.unsubscribe();
      // One liveness put each 500 ms: 6. Renewing each host every 500 ms made 120.
      expect(n).toBeGreaterThan(2);
      expect(n).toBeLessThanOrEqual(10);
    } finally {
      await nc.close();
    }
  });

  it('keeps every host through writes that land at the server but whose replies are lost', async () => {
    const a = await hub(1500);
    const b = await hub(1500);
    const links = await linkAll(a);
    await when('b shows every host fresh', async () => (allFresh(await hostsOf(b)) ? true : undefined), 10_000);
    const undo = injectFault(hostsKv(a), { lose: true, delayMs: 0 });
    const r = await holdsThrough(b, links, 4000);
    undo();
    expect(r.closed).toEqual([]);
    expect(r.notFresh).toBe(0);
    expect(a.logLines.join('')).not.toContain('another hub took over this host');
  });

  it('keeps every host through writes answered later than the lease', async () => {
    const a = await hub(1500);
    const b = await hub(1500);
    const links = await linkAll(a);
    await when('b shows every host fresh', async () => (allFresh(await hostsOf(b)) ? true : undefined), 10_000);
    const undo = injectFault(hostsKv(a), { lose: false, delayMs: 2000 });
    const r = await holdsThrough(b, links, 4500);
    undo();
    expect(r.closed).toEqual([]);
    expect(r.notFresh).toBe(0);
    expect(a.logLines.join('')).not.toContain('another hub took over this host');
  });

  it('a stalled event loop (2.5 s busy) hands no host off and leaves none unshown after it', async () => {
    const a = await hub(3000);
    const b = await hub(3000);
    const links = await linkAll(a);
    await when('b shows every host fresh', async () => (allFresh(await hostsOf(b)) ? true : undefined), 10_000);
    const t = Date.now();
    while (Date.now() - t < 2500) {
      // busy: no timer, socket or watch runs in either hub meanwhile
    }
    await when('b shows every host fresh again', async () => (allFresh(await hostsOf(b)) ? true : undefined), 3000, 50);
    const r = await holdsThrough(b, links, 2000);
    expect(r.closed).toEqual([]);
    expect(r.notFresh).toBe(0);
    expect(a.logLines.join('')).not.toContain('another hub took over this host');
  });
});
