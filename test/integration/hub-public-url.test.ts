// public_url is the base of every link the hub sends (ntfy's Click, a webhook's and a command's
// page_url), follows a reload, and a plain-HTTP hub listening beyond loopback says once that
// tokens travel in clear.

import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { afterEach, expect, it } from 'vitest';
import { notificationKey, type FleetNotification } from '../../shared/notify.js';
import { FakeCollector, SERVER } from '../support/hub-fake-collector.js';
import { TOKENS, startTestHub, testConfig, type TestHub } from '../support/hub-harness.js';
import { waitFor } from '../support/scratch-tmux.js';

let hub: TestHub | null = null;
let server: Server | null = null;
afterEach(async () => {
  await hub?.close();
  hub = null;
  server?.close();
  server = null;
});

interface Req {
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

async function receiver(): Promise<{ url: string; reqs: Req[] }> {
  const reqs: Req[] = [];
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      reqs.push({ url: req.url!, headers: req.headers, body });
      res.writeHead(200).end('{}');
    });
  });
  await new Promise<void>((ok) => server!.listen(0, '127.0.0.1', ok));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, reqs };
}

const blocked = (pane: string): FleetNotification => ({
  trigger: 'blocked',
  server: SERVER,
  pane,
  agent: 'claude',
  episode_ms: 1_796_000_000_000,
  at: 1_796_000_000_100,
  state: 'blocked',
  detail: 'permission',
  locator: 'main:1.0',
  repo: null,
  branch: null,
  context_pct: null,
  pending_tool: null,
  pending_summary: null,
});

const link = (base: string, pane: string) => `${base}/#host=build1&server=${encodeURIComponent(SERVER)}&pane=${encodeURIComponent(pane)}`;

it('ntfy Click and webhook page_url start at public_url, and a reload moves them', async () => {
  const r = await receiver();
  const sinks = [
    { name: 'phone', kind: 'ntfy' as const, url: `${r.url}/agents`, command: null, secret: null, on: ['blocked' as const], hosts: null, pageUrl: null },
    { name: 'ops', kind: 'webhook' as const, url: `${r.url}/tma`, command: null, secret: null, on: ['blocked' as const], hosts: null, pageUrl: null },
  ];
  const config = testConfig({ publicUrl: 'https://fleet.example/tma', notify: sinks });
  hub = await startTestHub({ config, notifyTiming: { groupMs: 50 }, heartbeatMs: 10_000 });
  const c = await FakeCollector.connect(hub.url, TOKENS.build1);
  c.hello('build1');
  await c.next((f) => f.type === 'welcome');

  const send = (pane: string) => {
    const e = blocked(pane);
    c.send({ type: 'notify', id: notificationKey(e), event: e });
  };
  // One message per sink per event, in order: the nth of each belongs to the nth event.
  let n = 0;
  const delivered = async (pane: string) => {
    n++;
    const of = (u: string) => r.reqs.filter((q) => q.url === u);
    await waitFor(() => of('/agents').length >= n && of('/tma').length >= n, `deliveries for ${pane}`, 5000);
    const hook = JSON.parse(of('/tma')[n - 1]!.body) as { page_url: string; events: { pane: string }[] };
    expect(hook.events.map((e) => e.pane)).toEqual([pane]);
    return { click: of('/agents')[n - 1]!.headers.click, page: hook.page_url };
  };

  send('%3');
  expect(await delivered('%3')).toEqual({ click: link('https://fleet.example/tma', '%3'), page: link('https://fleet.example/tma', '%3') });

  await hub.reload({ ...config, publicUrl: 'https://other.example' });
  send('%4');
  expect(await delivered('%4')).toEqual({ click: link('https://other.example', '%4'), page: link('https://other.example', '%4') });

  const { publicUrl: _gone, ...without } = config;
  await hub.reload(without);
  send('%5');
  expect(await delivered('%5')).toEqual({ click: link(hub.url, '%5'), page: link(hub.url, '%5') });
});

const clearWarnings = (h: TestHub) => h.logLines.filter((l) => l.includes('tokens travel in clear'));

it('plain HTTP beyond loopback warns once; on loopback it does not', async () => {
  hub = await startTestHub({ config: testConfig({ listen: { host: '0.0.0.0', port: 0 } }) });
  expect(clearWarnings(hub)).toHaveLength(1);
  expect(JSON.parse(clearWarnings(hub)[0]!)).toMatchObject({ level: 40, listen: `0.0.0.0:${hub.port}` });
  await hub.close();
  hub = await startTestHub();
  expect(clearWarnings(hub)).toHaveLength(0);
});
