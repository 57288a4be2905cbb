// Several hubs on one real nats-server (JetStream), with frame-level collector stand-ins: every
// hub serves the same fleet, one hub holds a host's link at a time, acts reach the holder from
// any hub, and a hub that loses NATS says so instead of showing old rows as fresh.

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { startNats, TEST_FLEET_KEY, type NatsNode } from '../support/nats-server.js';
import { FakeCollector, SERVER, protoRow, until } from '../support/hub-fake-collector.js';
import { TOKENS, startTestHub, testConfig, type TestHub } from '../support/hub-harness.js';
import type { HubConfig } from '../../hub/config/config.js';

const LEASE_MS = 1500;
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
  // Each test starts from an empty fleet: the buckets go with the hubs.
  const nc = await connect({ servers: nats.url });
  const jsm = await jetstreamManager(nc);
  for (const s of ['KV_tma-rows', 'KV_tma-hosts', 'KV_tma-slots']) await jsm.streams.delete(s).catch(() => undefined);
  await nc.close();
});

const natsConfig = (leaseMs: number): HubConfig => testConfig({ nats: { servers: [nats.url], replicas: 1, leaseMs, fleetKey: TEST_FLEET_KEY } });

async function hub(leaseMs = LEASE_MS): Promise<TestHub> {
  const h = await startTestHub({ config: natsConfig(leaseMs), actTimeoutMs: 1500 });
  hubs.push(h);
  return h;
}

interface Doc {
  agents: { pane: string; state: string; stale: boolean }[];
  hosts: { host: string; reachable: boolean; stale: boolean; reason: string | null; last_seen_ms: number | null; clock_offset_ms: number | null }[];
}
const doc = async (h: TestHub): Promise<Doc> => (await (await h.get('/v1/agents')).json()) as Doc;
/** The document's text with the clocks (which differ by when each hub heard last) blanked. */
const unclocked = async (h: TestHub): Promise<string> =>
  (await (await h.get('/v1/agents')).text()).replace(/"(last_seen_ms|clock_offset_ms)":-?\d+/g, '"$1":0');

async function link(h: TestHub, host = 'build1'): Promise<FakeCollector> {
  const c = await FakeCollector.connect(h.url, host === 'build1' ? TOKENS.build1 : TOKENS.laptop);
  collectors.push(c);
  c.hello(host);
  await c.next((f) => f.type === 'welcome' || f.type === 'error');
  // A live collector beats; the hub's heartbeat is 200 ms in tests.
  const beat = setInterval(() => (c.ws.readyState === c.ws.OPEN ? c.heartbeat() : clearInterval(beat)), 100);
  c.ws.on('close', () => clearInterval(beat));
  return c;
}

const post = (h: TestHub, body: unknown) =>
  fetch(`${h.url}/v1/act`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKENS.operator}` },
    body: JSON.stringify(body),
  });

function answerActs(c: FakeCollector): { frames: { id: string; slot: string }[] } {
  const seen = { frames: [] as { id: string; slot: string }[] };
  c.ws.on('message', (d) => {
    const f = JSON.parse(String(d)) as { type: string; id: string; slot: string; action: string; pane: string; server: string };
    if (f.type !== 'act') return;
    seen.frames.push(f);
    c.send({
      type: 'act_result',
      id: f.id,
      result: { schema: 1, action: f.action, pane: f.pane, outcome: 'sent', exit_code: 0, reason: 'sent', host: 'build1', server: f.server },
    });
  });
  return seen;
}

describe('the fleet on NATS', () => {
  it('both hubs serve the rows of a host linked to one, within moments of each change', async () => {
    const a = await hub();
    const b = await hub();
    const c = await link(a);
    c.snapshot(1, [protoRow({ pane: '%1', state: 'working', host: 'build1' })]);
    await until(async () => ((await doc(b)).agents.length === 1 ? true : undefined));
    const t0 = Date.now();
    c.delta(2, [protoRow({ pane: '%1', state: 'blocked', host: 'build1' })]);
    await until(async () => ((await doc(b)).agents[0]?.state === 'blocked' ? true : undefined), 2000, 5);
    const lag = Date.now() - t0;
    expect(lag).toBeLessThan(2000);
    console.log(`[nats-fleet] change visible on the other hub after ${lag} ms`);
    const bDoc = await doc(b);
    expect(bDoc.agents[0]).toMatchObject({ pane: '%1', state: 'blocked', stale: false });
    expect(bDoc.hosts.find((x) => x.host === 'build1')).toMatchObject({ reachable: true, stale: false });
    c.heartbeat();
    await until(async () => ((await unclocked(a)) === (await unclocked(b)) ? true : undefined));
  });

  it('a second link for the host on another hub is refused host-busy; once the first ends, it is taken', async () => {
    const a = await hub();
    const b = await hub();
    const first = await link(a);
    first.snapshot(1, [protoRow({ pane: '%1', host: 'build1' })]);
    await until(async () => ((await doc(b)).agents.length === 1 ? true : undefined));
    const second = await link(b);
    expect(second.received.find((f) => f.type === 'error')).toMatchObject({ code: 'host-busy' });
    first.close();
    // The claim is let go when the link ends: the next link on the other hub is accepted at once.
    await until(async () => ((await doc(b)).hosts.find((x) => x.host === 'build1')?.reachable === false ? true : undefined));
    const third = await link(b);
    expect(third.received.find((f) => f.type === 'welcome')).toBeTruthy();
    third.snapshot(1, [protoRow({ pane: '%2', host: 'build1' })]);
    await until(async () => ((await doc(a)).agents.map((r) => r.pane).join() === '%2' ? true : undefined));
    expect((await doc(a)).hosts.find((x) => x.host === 'build1')).toMatchObject({ reachable: true, stale: false });
  });

  it('an act through the hub the host is not linked to is sent, once; the same slot on both hubs answers the first result', async () => {
    const a = await hub();
    const b = await hub();
    const c = await link(a);
    c.snapshot(1, [protoRow({ pane: '%1', state: 'blocked', host: 'build1' })]);
    await until(async () => ((await doc(b)).agents.length === 1 ? true : undefined));
    const seen = answerActs(c);
    const r = await post(b, { host: 'build1', pane: '%1', action: 'approve' });
    expect(await r.json()).toMatchObject({ outcome: 'sent', host: 'build1', server: SERVER });
    expect(seen.frames).toHaveLength(1);
    const slotted = { host: 'build1', pane: '%1', action: 'approve', slot: 'op-1' };
    const answers = await Promise.all([post(a, slotted), post(b, slotted), post(b, slotted), post(a, slotted)].map(async (p) => (await p).json()));
    for (const x of answers) expect(x).toMatchObject({ outcome: 'sent' });
    expect(seen.frames.filter((f) => f.slot === 'op-1')).toHaveLength(1);
  });

  it('no hub holds the host: undelivered from every hub', async () => {
    const a = await hub();
    const b = await hub();
    const c = await link(a);
    c.snapshot(1, [protoRow({ pane: '%1', state: 'blocked', host: 'build1' })]);
    await until(async () => ((await doc(b)).agents.length === 1 ? true : undefined));
    c.close();
    await until(async () => ((await doc(b)).hosts.find((x) => x.host === 'build1')?.reachable === false ? true : undefined));
    for (const h of [a, b])
      expect(await (await post(h, { host: 'build1', pane: '%1', action: 'approve', server: SERVER })).json()).toMatchObject({ reason: 'undelivered' });
  });

  it('a hub started later lists the whole fleet before it serves: the same document as the others', async () => {
    const a = await hub();
    const c = await link(a);
    c.snapshot(1, [protoRow({ pane: '%1', host: 'build1' }), protoRow({ pane: '%2', state: 'blocked', host: 'build1' })]);
    const l = await link(a, 'laptop');
    l.snapshot(1, [protoRow({ pane: '%7', host: 'laptop' })]);
    await until(async () => ((await doc(a)).agents.length === 3 ? true : undefined));
    await new Promise((r) => setTimeout(r, 200));
    const late = await hub();
    const [x, y] = [await unclocked(late), await unclocked(a)];
    if (x !== y) {
      let i = 0;
      while (x[i] === y[i]) i++;
      expect(x.slice(i - 80, i + 80)).toBe(y.slice(i - 80, i + 80));
    }
    expect(x).toBe(y);
  });

  it('forgetting a host on one hub forgets it on all; a host held by another hub cannot be forgotten', async () => {
    const a = await hub();
    const b = await hub();
    const c = await link(a);
    c.snapshot(1, [protoRow({ pane: '%1', host: 'build1' })]);
    await until(async () => ((await doc(b)).agents.length === 1 ? true : undefined));
    const del = (h: TestHub) => fetch(`${h.url}/v1/hosts/build1`, { method: 'DELETE', headers: { authorization: `Bearer ${TOKENS.operator}` } });
    expect((await del(b)).status).toBe(409);
    c.close();
    await until(async () => ((await doc(b)).hosts.find((x) => x.host === 'build1')?.reachable === false ? true : undefined));
    expect((await del(b)).status).toBe(200);
    await until(async () => ((await doc(a)).agents.length === 0 ? true : undefined));
  });
});

/** An SSE stream's text so far, read in the background. */
function sseText(h: TestHub, query: string): { text: () => string; stop: () => void } {
  const ac = new AbortController();
  let text = '';
  void fetch(`${h.url}/v1/subscribe?${query}`, { headers: { authorization: `Bearer ${TOKENS.viewer}`, accept: 'text/event-stream' }, signal: ac.signal })
    .then(async (r) => {
      const dec = new TextDecoder();
      for await (const chunk of r.body!) text += dec.decode(chunk as Uint8Array, { stream: true });
    })
    .catch(() => undefined);
  return { text: () => text, stop: () => ac.abort() };
}

describe('streams and metrics on a hub the host is not linked to', () => {
  it('every subscribe mode on the other hub carries the change; host gauges agree', async () => {
    const a = await hub();
    const b = await hub();
    const c = await link(a);
    c.snapshot(1, [protoRow({ pane: '%1', state: 'working', host: 'build1' })]);
    await until(async () => ((await doc(b)).agents.length === 1 ? true : undefined));
    const streams = ['mode=documents', 'mode=events', 'mode=changes'].map((q) => ({ q, s: sseText(b, q) }));
    await new Promise((r) => setTimeout(r, 300));
    c.delta(2, [protoRow({ pane: '%1', state: 'blocked', host: 'build1' })]);
    try {
      for (const { q, s } of streams)
        await until(() => (s.text().includes('"blocked"') ? true : undefined), 2000).catch(() => expect(s.text(), q).toContain('"blocked"'));
    } finally {
      for (const { s } of streams) s.stop();
    }
    const gauges = async (h: TestHub) =>
      (await h.metricsText())
        .split('\n')
        .filter((l) => /^tma_hub_host_(up|rows|stale)|^tma_hub_hosts_connected|^tma_hub_rows/.test(l))
        .sort()
        .join('\n');
    await until(async () => ((await gauges(a)) === (await gauges(b)) ? true : undefined));
    expect(await gauges(b)).toContain('tma_hub_host_up{host="build1"} 1');
  });
});

describe('a hub that loses NATS', () => {
  it('says so on /healthz and on the hosts it follows, refuses acts it cannot route, and catches up when NATS is back', async () => {
    // Claims outlast the outage here; one that runs out ends the link (the next test).
    const a = await hub(15_000);
    const b = await hub(15_000);
    const c = await link(a);
    c.snapshot(1, [protoRow({ pane: '%1', state: 'blocked', host: 'build1' })]);
    await until(async () => ((await doc(b)).agents.length === 1 ? true : undefined));
    expect(await (await b.get('/healthz', null)).json()).toMatchObject({ ok: true, nats: { connected: true } });
    nats.kill();
    await until(async () => ((await b.get('/healthz', null)).status === 503 ? true : undefined), 8000);
    const d = await doc(b);
    expect(d.agents[0]).toMatchObject({ pane: '%1', stale: true });
    expect(d.hosts.find((x) => x.host === 'build1')).toMatchObject({ reachable: false, stale: true, reason: expect.stringContaining('lost NATS') });
    expect(await (await post(b, { host: 'build1', pane: '%1', action: 'approve' })).json()).toMatchObject({ reason: 'undelivered' });
    // The hub holding the link still serves its own host as it is.
    expect((await doc(a)).agents[0]).toMatchObject({ stale: false });
    c.delta(2, [protoRow({ pane: '%1', state: 'working', host: 'build1' })]);
    await nats.restart();
    await until(async () => ((await b.get('/healthz', null)).status === 200 ? true : undefined), 10_000);
    await until(async () => {
      const x = await doc(b);
      return x.agents[0]?.state === 'working' && x.agents[0]?.stale === false ? true : undefined;
    }, 10_000);
  }, 30_000);
});
