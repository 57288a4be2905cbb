// Issue 36's attacks on a fleet on NATS, by someone who can reach NATS but holds no fleet secret:
// a link minted with the key the action-key bucket holds, a hand-made request on a hub's
// `tma.act.<hub>` subject, and a row written straight into the rows bucket. Each must fire
// nothing and show nothing, and the refusals are counted where an operator looks (/healthz).

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { startNats, TEST_FLEET_KEY, type NatsNode } from '../support/nats-server.js';
import { FakeCollector, SERVER, protoRow, until } from '../support/hub-fake-collector.js';
import { TOKENS, startTestHub, testConfig, type TestHub } from '../support/hub-harness.js';
import { LINK_PATH, mintToken } from '../../hub/notify/action-link.js';
import { livenessKey, ownerKey, rowKey, slotKey, statusKey } from '../../hub/nats/keys.js';

let nats: NatsNode;
let attacker: NatsConnection;
const hubs: TestHub[] = [];
const collectors: FakeCollector[] = [];

beforeAll(async () => {
  nats = await startNats();
  attacker = await connect({ servers: nats.url, name: 'attacker' });
});
afterAll(async () => {
  await attacker?.close();
  nats?.stop();
});
afterEach(async () => {
  for (const c of collectors.splice(0)) c.ws.terminate();
  for (const h of hubs.splice(0)) await h.close();
  const jsm = await jetstreamManager(attacker);
  for (const s of ['KV_tma-rows', 'KV_tma-hosts', 'KV_tma-slots', 'KV_tma-action-key']) await jsm.streams.delete(s).catch(() => undefined);
});

async function hub(): Promise<TestHub> {
  const h = await startTestHub({
    config: testConfig({ nats: { servers: [nats.url], replicas: 1, leaseMs: 1500, fleetKey: TEST_FLEET_KEY } }),
    actTimeoutMs: 1500,
  });
  hubs.push(h);
  return h;
}

interface Row {
  pane: string;
  state: string;
  episode_ms: number;
  prompt_id?: string | null;
  pending_summary: string | null;
}
const agents = async (h: TestHub): Promise<Row[]> => ((await (await h.get('/v1/agents')).json()) as { agents: Row[] }).agents;
const health = async (h: TestHub) => (await (await h.get('/healthz')).json()) as { nats: Record<string, number | string> };

/** build1 linked to `a`, one blocked pane, seen on `b`; every act frame the collector gets is recorded and answered sent. */
async function blockedPane(a: TestHub, b: TestHub): Promise<{ c: FakeCollector; acts: unknown[] }> {
  const c = await FakeCollector.connect(a.url, TOKENS.build1);
  collectors.push(c);
  c.hello('build1');
  await c.next((f) => f.type === 'welcome' || f.type === 'error');
  const beat = setInterval(() => (c.ws.readyState === c.ws.OPEN ? c.heartbeat() : clearInterval(beat)), 100);
  c.ws.on('close', () => clearInterval(beat));
  const acts: unknown[] = [];
  c.ws.on('message', (d) => {
    const f = JSON.parse(String(d)) as { type: string; id: string; action: string; pane: string; server: string };
    if (f.type !== 'act') return;
    acts.push(f);
    c.send({
      type: 'act_result',
      id: f.id,
      result: { schema: 1, action: f.action, pane: f.pane, outcome: 'sent', exit_code: 0, reason: 'sent', host: 'build1', server: f.server },
    });
  });
  c.snapshot(1, [protoRow({ pane: '%1', state: 'blocked', host: 'build1', pending_summary: 'Run make test?' })]);
  await until(async () => ((await agents(b))[0]?.state === 'blocked' ? true : undefined));
  return { c, acts };
}

describe('someone who reaches NATS without the fleet secret', () => {
  it('cannot mint an approve link from what the action-key bucket holds', async () => {
    const a = await hub();
    const b = await hub();
    const { acts } = await blockedPane(a, b);
    // Read the bucket's key, as on hubs that kept it there; where there is none, plant one.
    const kv = await new Kvm(attacker).create('tma-action-key', { history: 1 });
    const held = await kv.get('key');
    let hex = held?.operation === 'PUT' ? held.string() : '';
    if (!/^[0-9a-f]{64}$/.test(hex)) {
      hex = randomBytes(32).toString('hex');
      await kv.put('key', hex);
    }
    const row = (await agents(b))[0]!;
    const token = mintToken(Buffer.from(hex, 'hex'), {
      host: 'build1',
      server: SERVER,
      pane: '%1',
      episode_ms: row.episode_ms,
      prompt_id: row.prompt_id ?? null,
      action: 'approve',
      sink: 'attacker',
      expires_ms: Date.now() + 60_000,
    });
    for (const h of [a, b]) {
      const r = await fetch(`${h.url}${LINK_PATH}${token}`, { method: 'POST' });
      expect(r.status).toBe(403);
      expect(await r.json()).toMatchObject({ refused: 'altered' });
    }
    expect(acts).toHaveLength(0);
  });

  it('cannot send a hand-made request on the owner hub’s tma.act subject', async () => {
    const a = await hub();
    const b = await hub();
    const { acts } = await blockedPane(a, b);
    const hosts = await new Kvm(attacker).open('tma-hosts');
    const owner = (await hosts.get(ownerKey('build1')))!.json<{ hub: string }>().hub;
    const frame = {
      type: 'act',
      id: 'forged-1',
      action: 'approve',
      server: SERVER,
      pane: '%1',
      expect_episode_ms: null,
      expect_permission_request: null,
      slot: null,
      principal: 'olga',
      deadline_ms: Date.now() + 5000,
    };
    const m = await attacker.request(`tma.act.${owner}`, JSON.stringify({ host: 'build1', frame, timeout_ms: 1000 }), { timeout: 3000 });
    const answer = m.json<Record<string, unknown>>();
    expect(answer).not.toHaveProperty('result');
    expect(answer.refused).toMatch(/no fleet seal/);
    // Nor with a seal made up, or one lifted from another request and replayed.
    const fake = { from: 'x', to: owner, at_ms: Date.now(), nonce: 'n1', mac: randomBytes(32).toString('base64url') };
    const m2 = await attacker.request(`tma.act.${owner}`, JSON.stringify({ host: 'build1', frame, timeout_ms: 1000, seal: fake }), { timeout: 3000 });
    expect(m2.json<Record<string, unknown>>().refused).toMatch(/does not verify/);
    expect(acts).toHaveLength(0);
    const holder = (await health(a)).nats.hub_id === (owner as unknown) ? a : b;
    expect((await health(holder)).nats.requests_refused).toBe(2);
    // While the hub's own route, sealed with the fleet key, still fires once.
    const r = await fetch(`${b.url}/v1/act`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKENS.operator}` },
      body: JSON.stringify({ host: 'build1', pane: '%1', action: 'approve' }),
    });
    expect(await r.json()).toMatchObject({ outcome: 'sent' });
    expect(acts).toHaveLength(1);
  });

  it('cannot put a host status in the bucket that a follower shows or acts on', async () => {
    const a = await hub();
    const b = await hub();
    await blockedPane(a, b);
    const hosts = await new Kvm(attacker).open('tma-hosts');
    const genuine = (await hosts.get(statusKey('build1')))!.json<Record<string, unknown>>();
    // The owner's own status, its fields changed, with and without the MAC it carried.
    const { m: _m, ...bare } = genuine;
    const forged = { ...bare, collectorVersion: 'FORGED', actionsAllowed: ['approve', 'deny', 'interrupt', 'FORGED'] };
    await hosts.put(statusKey('build1'), JSON.stringify(forged));
    const rev = await hosts.put(statusKey('build1'), JSON.stringify({ ...forged, m: genuine.m }));
    for (const h of [a, b]) await until(async () => (Number((await health(h)).nats.hosts_revision) >= rev ? true : undefined));
    await new Promise((r) => setImmediate(r));
    const shown = async (h: TestHub) =>
      ((await (await h.get('/v1/agents')).json()) as { hosts: { host: string; collector_version: string | null; actions_allowed: string[] }[] }).hosts.find(
        (x) => x.host === 'build1',
      )!;
    for (const h of [a, b]) {
      expect((await shown(h)).collector_version).not.toBe('FORGED');
      expect((await shown(h)).actions_allowed).not.toContain('FORGED');
    }
    expect((await health(b)).nats.statuses_refused).toBe(2);
  });

  it('cannot take a host over with a claim and a liveness of its own in the bucket', async () => {
    const a = await hub();
    const b = await hub();
    const { c, acts } = await blockedPane(a, b);
    const hosts = await new Kvm(attacker).open('tma-hosts');
    const holder = (await hosts.get(ownerKey('build1')))!.json<{ hub: string }>().hub;
    // A hub of its own, live for an hour, now named as build1's holder: its requests would come here.
    const heard: string[] = [];
    const sub = attacker.subscribe('tma.act.evil', { callback: (_e, m) => void heard.push(m.string()) });
    await hosts.put(livenessKey('evil'), JSON.stringify({ hub: 'evil', until_ms: Date.now() + 3_600_000 }));
    const rev = await hosts.put(ownerKey('build1'), JSON.stringify({ hub: 'evil', until_ms: Date.now() + 3_600_000, hub_lease: true }));
    for (const h of [a, b]) await until(async () => (Number((await health(h)).nats.hosts_revision) >= rev ? true : undefined));
    // The holder writes its own claim again; the link it holds stays up.
    await until(async () => ((await hosts.get(ownerKey('build1')))!.json<{ hub: string }>().hub === holder ? true : undefined));
    expect(c.ws.readyState).toBe(c.ws.OPEN);
    const r = await fetch(`${b.url}/v1/act`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKENS.operator}` },
      body: JSON.stringify({ host: 'build1', pane: '%1', action: 'approve' }),
    });
    expect(await r.json()).toMatchObject({ outcome: 'sent' });
    expect(acts).toHaveLength(1);
    expect(heard).toEqual([]);
    sub.unsubscribe();
    expect(Number((await health(b)).nats.claims_refused)).toBe(2);
  });

  it('cannot put a slot result in the bucket that a hub hands a caller instead of acting', async () => {
    const a = await hub();
    const b = await hub();
    const { acts } = await blockedPane(a, b);
    const slots = await new Kvm(attacker).open('tma-slots');
    const forged = { schema: 1, action: 'approve', pane: '%1', outcome: 'sent', exit_code: 0, reason: 'FORGED', host: 'build1', server: SERVER };
    await slots.put(slotKey('build1', 'olga-1'), JSON.stringify({ hub: 'x', at_ms: Date.now(), result: forged }));
    const r = await fetch(`${b.url}/v1/act`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKENS.operator}` },
      body: JSON.stringify({ host: 'build1', pane: '%1', action: 'approve', slot: 'olga-1' }),
    });
    const body = (await r.json()) as { outcome: string; reason: string | null };
    // The host was asked (once) and its answer is what the caller got.
    expect(body.reason).not.toBe('FORGED');
    expect(body.outcome).toBe('sent');
    expect(acts).toHaveLength(1);
    expect(Number((await health(b)).nats.slots_refused)).toBeGreaterThan(0);
  });

  it('cannot put a row in the bucket that a follower shows as what the pane asks', async () => {
    const a = await hub();
    const b = await hub();
    const { c } = await blockedPane(a, b);
    const rows = await new Kvm(attacker).open('tma-rows');
    const genuine = (await rows.get(rowKey('build1', SERVER, '%1')))!.json<{ i: string }>();
    const forged = protoRow({ pane: '%1', state: 'blocked', host: 'build1', pending_summary: 'FORGED: approve to continue' });
    await rows.put(rowKey('build1', SERVER, '%1'), JSON.stringify({ i: genuine.i, r: forged }));
    // And one for a pane that does not exist, bound to another host than its key names.
    const rev = await rows.put(rowKey('build1', SERVER, '%9'), JSON.stringify({ i: genuine.i, r: protoRow({ pane: '%9', host: 'laptop', state: 'blocked' }) }));
    // Once both hubs have read past the forged writes (and rebuilt), neither shows them.
    for (const h of [a, b]) await until(async () => (Number((await health(h)).nats.rows_revision) >= rev ? true : undefined));
    await new Promise((r) => setImmediate(r));
    for (const h of [a, b]) for (const r of await agents(h)) expect(r.pending_summary ?? '').not.toMatch(/FORGED/);
    expect((await agents(b)).map((r) => r.pane)).not.toContain('%9');
    expect((await health(b)).nats.rows_refused).toBe(2);
    // The owner's next write of the pane puts the true row back on the follower.
    c.delta(2, [protoRow({ pane: '%1', state: 'blocked', host: 'build1', pending_summary: 'Run make test again?' })]);
    await until(async () => ((await agents(b))[0]?.pending_summary === 'Run make test again?' ? true : undefined));
  });
});
