// Each hub's own NATS rights, as deploy/nats/tma-account.conf ships them, on a real nats-server:
// two hubs signed in as hub-a and hub-b serve one fleet under them (an approve from a client of
// hub a fires once on the host hub b holds; a notification goes out once through the sinks'
// shared consumers), while hub-a's credentials cannot listen on hub b's request subject or
// inboxes, nor delete the fleet's buckets.

import { createServer, type Server } from 'node:http';
import { relative, join } from 'node:path';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { notificationKey, type FleetNotification } from '../../shared/notify.js';
import type { NotifySinkConfig } from '../../hub/notify/sink-config.js';
import { sinkConsumer } from '../../hub/nats/keys.js';
import { FakeCollector, protoRow, SERVER, until } from '../support/hub-fake-collector.js';
import { TOKENS, startTestHub, testConfig, type TestHub } from '../support/hub-harness.js';
import { startNats, TEST_FLEET_KEY, type NatsNode } from '../support/nats-server.js';

const DEPLOY = join(import.meta.dirname, '../../deploy/nats');
const PASSWORDS = { TMA_NATS_HUB_A_PASSWORD: 'a-'.repeat(16), TMA_NATS_HUB_B_PASSWORD: 'b-'.repeat(16), TMA_NATS_HUB_C_PASSWORD: 'c-'.repeat(16) };
const EPISODE = 1_796_000_000_000;
/** The connection name of the test's own probe with hub-a's credentials: its refusals are expected. */
const PROBE = 'rights-probe';

let nats: NatsNode;
let rx: Server;
let rxUrl: string;
const taken: { delivery: string; panes: string[]; links: string[] }[] = [];
const hubs: TestHub[] = [];
const collectors: FakeCollector[] = [];
const conns: NatsConnection[] = [];
let a: TestHub;
let b: TestHub;
let acts: unknown[];

const sink = (): NotifySinkConfig => ({
  name: 'ops',
  kind: 'webhook',
  url: `${rxUrl}/hook`,
  command: null,
  secret: null,
  on: ['blocked'],
  hosts: null,
  pageUrl: null,
  dwellMs: 0,
  cooldownMs: 0,
  whenLooking: 'send',
  actions: ['approve'],
});

async function hub(user: 'hub-a' | 'hub-b', password: string): Promise<TestHub> {
  const h = await startTestHub({
    config: testConfig({
      nats: { servers: [nats.url], replicas: 1, leaseMs: 1500, fleetKey: TEST_FLEET_KEY, user: { name: user, password } },
      notify: [sink()],
    }),
    actTimeoutMs: 3000,
  });
  hubs.push(h);
  return h;
}

const hubId = async (h: TestHub): Promise<string> => ((await (await h.get('/healthz')).json()) as { nats: { hub_id: string } }).nats.hub_id;

/** What the server says when `nc` subscribes to `subject`: the error, or 'no error' within 2 s. */
async function subscribeOutcome(nc: NatsConnection, subject: string): Promise<string> {
  const sub = nc.subscribe(subject);
  const iterated = (async () => {
    try {
      for await (const _ of sub) return 'a message arrived';
      return 'closed without error';
    } catch (e) {
      return (e as Error).message;
    }
  })();
  return Promise.race([iterated, new Promise<string>((r) => setTimeout(() => r('no error'), 2000))]).finally(() => sub.unsubscribe());
}

beforeAll(async () => {
  nats = await startNats({
    extra: (at) => [`include "${relative(at, join(DEPLOY, 'tma-account.conf'))}"`, ...(process.env.TMA_NATS_TRACE ? ['trace: true'] : [])],
    env: PASSWORDS,
  });
  rx = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const doc = JSON.parse(body) as { delivery: string; events: { pane: string; actions: { url: string }[] }[] };
      taken.push({ delivery: doc.delivery, panes: doc.events.map((e) => e.pane), links: doc.events.flatMap((e) => e.actions.map((x) => x.url)) });
      res.writeHead(200).end('{}');
    });
  });
  await new Promise<void>((ok) => rx.listen(0, '127.0.0.1', ok));
  rxUrl = `http://127.0.0.1:${(rx.address() as { port: number }).port}`;
  a = await hub('hub-a', PASSWORDS.TMA_NATS_HUB_A_PASSWORD);
  b = await hub('hub-b', PASSWORDS.TMA_NATS_HUB_B_PASSWORD);
  // build1 links to hub b; its acts are recorded and answered sent.
  const c = await FakeCollector.connect(b.url, TOKENS.build1);
  collectors.push(c);
  acts = [];
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
  c.hello('build1');
  await c.next((f) => f.type === 'welcome', 5000);
  const beat = setInterval(() => (c.ws.readyState === c.ws.OPEN ? c.heartbeat() : clearInterval(beat)), 200);
  c.ws.on('close', () => clearInterval(beat));
  c.snapshot(1, [protoRow({ pane: '%1', state: 'blocked', host: 'build1', episode_ms: EPISODE, since_ms: EPISODE, pending_summary: 'Run make test?' })]);
  await until(async () => {
    const rows = ((await (await a.get('/v1/agents')).json()) as { agents: { state: string }[] }).agents;
    return rows[0]?.state === 'blocked' ? true : undefined;
  });
}, 60_000);

afterAll(async () => {
  for (const c of collectors) c.ws.terminate();
  for (const nc of conns) await nc.close().catch(() => undefined);
  for (const h of hubs) await h.close();
  rx?.close();
  // TMA_NATS_TRACE=<file>: keep the server's trace, to see which subjects hubs use.
  if (process.env.TMA_NATS_TRACE) (await import('node:fs')).writeFileSync(process.env.TMA_NATS_TRACE, nats.log());
  nats?.stop();
});

describe('hubs under their own NATS users (deploy/nats/tma-account.conf)', { timeout: 60_000 }, () => {
  it('name their request subjects and inboxes after their user', async () => {
    expect(await hubId(a)).toMatch(/^hub-a\.[A-Za-z0-9_-]+$/);
    expect(await hubId(b)).toMatch(/^hub-b\.[A-Za-z0-9_-]+$/);
  });

  it('an approve from a client of hub a fires once on the host hub b holds', async () => {
    const r = await fetch(`${a.url}/v1/act`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKENS.operator}` },
      body: JSON.stringify({ host: 'build1', pane: '%1', action: 'approve' }),
    });
    expect(await r.json()).toMatchObject({ outcome: 'sent' });
    expect(acts).toHaveLength(1);
  });

  it('a notification goes out once through the shared consumer', async () => {
    const e: FleetNotification = {
      trigger: 'blocked',
      server: SERVER,
      pane: '%1',
      agent: 'claude',
      episode_ms: EPISODE,
      at: EPISODE + 100,
      state: 'blocked',
      detail: 'permission',
      locator: 'main:1.0',
      repo: 'api',
      branch: 'main',
      context_pct: null,
      pending_tool: 'Bash',
      pending_summary: null,
    };
    const c = collectors[0]!;
    const from = c.received.length;
    c.send({ type: 'notify', id: notificationKey(e), event: e });
    await c.next((f) => f.type === 'notify_ack' && (f.ids as string[]).includes(notificationKey(e)), 10_000, from);
    await until(async () => (taken.length > 0 ? true : undefined), 15_000);
    // Anything that would come twice comes now.
    await new Promise((r) => setTimeout(r, 2000));
    expect(taken).toEqual([{ delivery: expect.any(String) as string, panes: ['%1'], links: [expect.any(String) as string] }]);
    // Both hubs read the same journal, written through their own rights.
    const list = async (h: TestHub) =>
      ((await (await h.get('/v1/notifications', TOKENS.operator)).json()) as { notifications: { pane: string }[] }).notifications.map((n) => n.pane);
    expect(await list(a)).toEqual(['%1']);
    expect(await list(b)).toEqual(['%1']);
    // Its approve link, posted to whichever hub did not send it, fires once (the nonce book), then 409.
    const link = new URL(taken[0]!.links[0]!);
    const other = [a, b].find((h) => new URL(h.url).port !== link.port)!;
    const firedBefore = acts.length;
    const post = () => fetch(`${other.url}${link.pathname}`, { method: 'POST' });
    expect((await post()).status).toBe(200);
    expect((await post()).status).toBe(409);
    expect(acts.length - firedBefore).toBe(1);
  });

  it('through a NATS restart the hubs resume, refused nothing but a best-effort cleanup', async () => {
    await nats.restart();
    const connected = async (h: TestHub) => ((await (await h.get('/healthz')).json()) as { nats: { connected: boolean } }).nats.connected;
    await until(async () => ((await connected(a)) && (await connected(b)) ? true : undefined), 20_000);
    const firedBefore = acts.length;
    const r = await until(async () => {
      const res = await fetch(`${a.url}/v1/act`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKENS.operator}` },
        body: JSON.stringify({ host: 'build1', pane: '%1', action: 'approve' }),
      });
      const body = (await res.json()) as { outcome?: string };
      return body.outcome === 'sent' ? body : undefined;
    }, 20_000);
    expect(r.outcome).toBe('sent');
    expect(acts.length - firedBefore).toBe(1);
    // Watches resumed: a change on b shows on a.
    collectors[0]!.delta(2, [
      protoRow({ pane: '%1', state: 'blocked', host: 'build1', episode_ms: EPISODE, since_ms: EPISODE, pending_summary: 'After the restart?' }),
    ]);
    await until(async () => {
      const rows = ((await (await a.get('/v1/agents')).json()) as { agents: { pending_summary: string | null }[] }).agents;
      return rows[0]?.pending_summary === 'After the restart?' ? true : undefined;
    }, 20_000);
    // The one refusal allowed: the notification list's ordered consumer deleting its old consumer
    // on reset, which the client does best-effort (it lapses by itself in 5 min). Deleting consumers
    // of tma-notify stays refused, so no user can delete the sinks' shared consumers.
    const refusals = nats
      .log()
      .split('\n')
      .filter((l) => /Violation/i.test(l) && !l.includes(PROBE))
      .filter((l) => !/Publish Violation - User "hub-[ab]", Subject "\$JS\.API\.CONSUMER\.DELETE\.tma-notify\.[A-Za-z0-9]+_\d+"$/.test(l));
    expect(refusals).toEqual([]);
  });

  it("hub-a's credentials cannot listen on hub b's requests or inboxes, nor remove the buckets", async () => {
    // Used as hub a uses them: replies under its own inbox prefix.
    const nc = await connect({
      servers: nats.url,
      user: 'hub-a',
      pass: PASSWORDS.TMA_NATS_HUB_A_PASSWORD,
      reconnect: false,
      inboxPrefix: '_INBOX.hub-a',
      name: PROBE,
    });
    conns.push(nc);
    const idB = await hubId(b);
    for (const subject of [`tma.act.${idB}`, 'tma.act.hub-b.>', 'tma.act.>', 'tma.>', '_INBOX.hub-b.>', '_INBOX.>', '>'])
      expect(await subscribeOutcome(nc, subject), subject).toMatch(/permissions violation/i);
    // Its own, which hub a's user needs, are allowed.
    expect(await subscribeOutcome(nc, `tma.act.${await hubId(a)}`)).toBe('no error');
    const jsm = await jetstreamManager(nc);
    for (const s of ['KV_tma-rows', 'KV_tma-hosts', 'tma-notify']) {
      await expect(jsm.streams.delete(s), s).rejects.toThrow();
      await expect(jsm.streams.purge(s), s).rejects.toThrow();
    }
    await expect(jsm.consumers.delete('tma-notify', sinkConsumer('ops'))).rejects.toThrow();
    expect((await jsm.streams.info('KV_tma-rows')).config.name).toBe('KV_tma-rows');
    expect((await jsm.consumers.info('tma-notify', sinkConsumer('ops'))).name).toBe(sinkConsumer('ops'));
  });

  it('when hub b stops, hub a takes build1 over under its own rights', async () => {
    const before = nats.log().split('\n').length;
    collectors[0]!.ws.terminate();
    await b.close();
    hubs.splice(hubs.indexOf(b), 1);
    const c = await FakeCollector.connect(a.url, TOKENS.build1);
    collectors.push(c);
    c.hello('build1');
    expect((await c.next((f) => f.type === 'welcome' || f.type === 'error', 10_000)).type).toBe('welcome');
    c.snapshot(1, [protoRow({ pane: '%2', state: 'blocked', host: 'build1', pending_summary: 'On hub a now?' })]);
    await until(async () => {
      const rows = ((await (await a.get('/v1/agents')).json()) as { agents: { pane: string; stale: boolean }[] }).agents;
      return rows.length === 1 && rows[0]!.pane === '%2' && !rows[0]!.stale ? true : undefined;
    }, 10_000);
    const refusals = nats
      .log()
      .split('\n')
      .slice(before)
      .filter((l) => /Violation/i.test(l));
    expect(refusals).toEqual([]);
  });
});
