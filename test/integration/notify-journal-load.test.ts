// The hub's notification journal under abuse, on a real hub process: one host token floods notify
// frames while /healthz is timed and another host's link is watched; and a hub killed with SIGKILL
// while a loopback receiver holds a delivery sends it again, after the restart, under the same id.
// (bench/notify-journal.ts measures the same at full size.)

import { createServer, type Server, type ServerResponse } from 'node:http';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { notificationKey, type FleetNotification } from '../../shared/notify.js';
import { FakeCollector, SERVER, protoRow, until } from '../support/hub-fake-collector.js';
import { rssBytes, startHubProcess, type HubProcess } from '../support/hub-process.js';
import { freePort } from '../support/ports.js';

const VIEWER = 'viewer-tok-77aa';
const cleanup: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

interface Got {
  delivery: string;
  header: string | undefined;
  panes: string[];
}

/** A webhook receiver; `hold` keeps a request unanswered (the sink "holds the delivery"). */
async function receiver(mode: () => 'ok' | 'fail' | 'hold'): Promise<{ url: string; got: Got[]; held: ServerResponse[]; server: Server }> {
  const r = { url: '', got: [] as Got[], held: [] as ServerResponse[], server: null as unknown as Server };
  r.server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const m = mode();
      if (m === 'fail') return void res.writeHead(500).end();
      const doc = JSON.parse(body) as { delivery: string; events: { pane: string }[] };
      r.got.push({ delivery: doc.delivery, header: req.headers['x-tma-delivery'] as string | undefined, panes: doc.events.map((e) => e.pane) });
      if (m === 'hold') r.held.push(res);
      else res.writeHead(204).end();
    });
  });
  await new Promise<void>((ok) => r.server.listen(0, '127.0.0.1', ok));
  r.url = `http://127.0.0.1:${(r.server.address() as { port: number }).port}/hook`;
  cleanup.push(() => {
    for (const h of r.held) h.destroy();
    r.server.closeAllConnections();
    r.server.close();
  });
  return r;
}

function ev(i: number): FleetNotification {
  return {
    trigger: 'blocked',
    server: SERVER,
    pane: `%${i}`,
    agent: 'claude',
    episode_ms: 1_796_000_000_000 + i,
    at: 1_796_000_000_100 + i,
    state: 'blocked',
    detail: 'permission',
    locator: 'main:1.0',
    repo: null,
    branch: null,
    context_pct: null,
    pending_tool: 'Bash',
    pending_summary: null,
  };
}

const collectors = [
  '[[collector]]',
  'host = "flood"',
  'token = "tok-flood-1a2b"',
  '[[collector]]',
  'host = "calm"',
  'token = "tok-calm-3c4d"',
  '[[client]]',
  'name = "vic"',
  `token = "${VIEWER}"`,
  'role = "viewer"',
];

async function linkUp(hub: HubProcess, host: string, token: string): Promise<FakeCollector> {
  const c = await FakeCollector.connect(hub.url, token);
  cleanup.push(() => c.ws.terminate());
  c.hello(host);
  await c.next((f) => f.type === 'welcome');
  c.snapshot(1, [protoRow({ host, pane: '%1' })]);
  return c;
}

it('a burst of 5,000 notify frames from one host leaves /healthz, the other host and memory alone', { timeout: 120_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tma-notify-load-'));
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  const ok = await receiver(() => 'ok');
  const down = await receiver(() => 'fail');
  const hub = await startHubProcess(
    dir,
    await freePort(),
    [
      ...collectors,
      '[[notify]]',
      'name = "ops"',
      'kind = "webhook"',
      `url = "${ok.url}"`,
      '[[notify]]',
      'name = "down"',
      'kind = "webhook"',
      `url = "${down.url}"`,
      '[[notify]]',
      'name = "script"',
      'kind = "command"',
      'command = "cat >/dev/null"',
      '',
    ].join('\n'),
  );
  cleanup.push(() => hub.kill());
  const flood = await linkUp(hub, 'flood', 'tok-flood-1a2b');
  const calm = await linkUp(hub, 'calm', 'tok-calm-3c4d');

  // /healthz every 50 ms from before the burst to well after it; each must answer within 1 s.
  const latencies: number[] = [];
  let timing = true;
  const probe = (async () => {
    while (timing) {
      const t = Date.now();
      const okay = await fetch(`${hub.url}/healthz`, { signal: AbortSignal.timeout(1000) }).then(
        (r) => r.ok,
        () => false,
      );
      latencies.push(okay ? Date.now() - t : Infinity);
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  await new Promise((r) => setTimeout(r, 300));

  const N = 5000;
  for (let i = 0; i < N; i++) {
    const event = ev(i);
    flood.send({ type: 'notify', id: notificationKey(event), event });
  }
  // Every frame is acknowledged or refused (counted); the refusal is worded, once a second.
  const metric = async () => {
    const text = await (await fetch(`${hub.url}/metrics`, { headers: { authorization: `Bearer ${VIEWER}` } })).text();
    return Number(/tma_hub_notify_refused_total\{reason="budget"\} (\d+)/.exec(text)?.[1] ?? NaN);
  };
  const acked = () => flood.received.reduce((n, f) => n + (f.type === 'notify_ack' ? (f.ids as string[]).length : 0), 0);
  await until(async () => (acked() + (await metric()) >= N ? true : undefined), 60_000, 100);
  const acks = acked();
  const refused = await metric();
  expect(acks).toBeGreaterThanOrEqual(500);
  expect(acks).toBeLessThan(1000);
  expect(refused).toBe(N - acks);
  const refusals = flood.received.filter((f) => f.type === 'error' && f.code === 'rate-limited');
  expect(refusals.length).toBeGreaterThanOrEqual(1);
  expect(refusals.length).toBeLessThan(20);
  expect(refusals[0]!.message).toMatch(/notify frames from flood exceed 500 at once/);

  // The other host's link is up and its notification is recorded at once.
  const calmFrom = calm.received.length;
  const mine = ev(1);
  calm.send({ type: 'notify', id: notificationKey(mine), event: mine });
  await calm.next((f) => f.type === 'notify_ack', 1000, calmFrom);
  expect(calm.closeCode).toBeNull();
  // The flooding link still carries rows.
  flood.delta(2, [protoRow({ host: 'flood', pane: '%7', state: 'blocked' })]);
  await until(
    async () => {
      const doc = (await (await fetch(`${hub.url}/v1/agents`, { headers: { authorization: `Bearer ${VIEWER}` } })).json()) as {
        agents: { host: string; pane: string }[];
      };
      return doc.agents.some((a) => a.host === 'flood' && a.pane === '%7') ? true : undefined;
    },
    5000,
    50,
  );
  expect(flood.closeCode).toBeNull();

  await new Promise((r) => setTimeout(r, 2000));
  timing = false;
  await probe;
  expect(latencies.length).toBeGreaterThan(20);
  expect(Math.max(...latencies)).toBeLessThan(1000);
  expect(rssBytes(hub.child.pid!)).toBeLessThan(300 * 1024 * 1024);

  const metrics = await (await fetch(`${hub.url}/metrics`, { headers: { authorization: `Bearer ${VIEWER}` } })).text();
  expect(metrics).toContain(`tma_hub_notify_refused_total{reason="budget"} ${refused}`);
  expect(statSync(join(dir, 'hub-state', 'tma', 'hub-notifications.jsonl')).size).toBeLessThan(4 * 1024 * 1024);
});

it('a delivery cut by a hub kill -9 is sent again under the same delivery id', { timeout: 120_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tma-notify-kill-'));
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  let mode: 'hold' | 'ok' = 'hold';
  const r = await receiver(() => mode);
  const port = await freePort();
  // No dwell or cooldown: the fake collector sends no rows for a dwell to check, and the
  // notifications are all this test is about.
  const toml = [...collectors, '[[notify]]', 'name = "slow"', 'kind = "webhook"', `url = "${r.url}"`, 'dwell_secs = 0', 'cooldown_secs = 0', ''].join('\n');
  let hub = await startHubProcess(dir, port, toml);
  cleanup.push(() => hub.kill());
  const c = await linkUp(hub, 'flood', 'tok-flood-1a2b');
  for (const i of [1, 2, 3]) {
    const event = ev(i);
    c.send({ type: 'notify', id: notificationKey(event), event });
  }
  await c.next((f) => f.type === 'notify_ack');
  await until(() => (r.got.length ? true : undefined), 10_000, 20);
  const first = r.got[0]!;
  expect(first.header).toBe(first.delivery);

  // The sink holds the delivery; the hub dies mid-request and comes back on the same journal.
  await hub.kill();
  for (const h of r.held.splice(0)) h.destroy();
  mode = 'ok';
  hub = await startHubProcess(dir, port, toml);
  await until(() => (r.got.length >= 2 ? true : undefined), 20_000, 50);
  const again = r.got.find((g, i) => i > 0 && g.panes.join() === first.panes.join());
  expect(again, JSON.stringify(r.got)).toBeDefined();
  expect(again!.delivery).toBe(first.delivery);
  expect(again!.header).toBe(first.delivery);
});
