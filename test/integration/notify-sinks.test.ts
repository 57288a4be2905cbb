// The hub's sinks against loopback receivers: the request an ntfy server expects, a signed webhook,
// a command sink, grouping of a burst into one message, and `resolved` going only where its
// blocked went. The collector side is a raw WebSocket client speaking the protocol frames.

import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import type { FleetNotification } from '../../shared/notify.js';
import { notificationKey } from '../../shared/notify.js';
import { FakeCollector, SERVER } from '../support/hub-fake-collector.js';
import { TOKENS, startTestHub, testConfig, type TestHub } from '../support/hub-harness.js';
import { waitFor } from '../support/scratch-tmux.js';

interface Req {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

let hub: TestHub | null = null;
let server: Server | null = null;
let dir = '';
afterEach(async () => {
  await hub?.close();
  hub = null;
  server?.close();
  server = null;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function receiver(): Promise<{ url: string; reqs: Req[] }> {
  const reqs: Req[] = [];
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      reqs.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      res.writeHead(200).end('{}');
    });
  });
  await new Promise<void>((ok) => server!.listen(0, '127.0.0.1', ok));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, reqs };
}

function event(over: Partial<FleetNotification> = {}): FleetNotification {
  return {
    trigger: 'blocked',
    server: SERVER,
    pane: '%3',
    agent: 'claude',
    episode_ms: 1_796_000_000_000,
    at: 1_796_000_000_100,
    state: 'blocked',
    detail: 'permission',
    locator: 'main:1.0',
    repo: 'api',
    branch: 'main',
    context_pct: null,
    pending_tool: 'Bash',
    pending_summary: null,
    ...over,
  };
}

it('sends ntfy, signed webhook and command messages, grouped, with resolved only after a blocked it took', async () => {
  dir = mkdtempSync(join(tmpdir(), 'tma-notify-sinks-'));
  const r = await receiver();
  const out = join(dir, 'cmd.jsonl');
  hub = await startTestHub({
    config: testConfig({
      notify: [
        {
          name: 'phone',
          kind: 'ntfy',
          url: `${r.url}/agents`,
          command: null,
          secret: null,
          on: ['blocked', 'done'],
          hosts: null,
          pageUrl: 'https://hub.example/',
        },
        { name: 'ops', kind: 'webhook', url: `${r.url}/tma`, command: null, secret: 's3cret', on: ['blocked'], hosts: ['build1'], pageUrl: null },
        { name: 'script', kind: 'command', url: null, command: `cat >> ${out}`, secret: null, on: ['blocked'], hosts: null, pageUrl: null },
      ],
    }),
    notifyTiming: { groupMs: 300 },
    // This collector sends no heartbeats; the link must outlive the test.
    heartbeatMs: 10_000,
  });
  const c = await FakeCollector.connect(hub.url, TOKENS.build1);
  c.hello('build1');
  await c.next((f) => f.type === 'welcome');

  // One blocked pane: ntfy gets the plain-text publish with its headers.
  const one = event();
  c.send({ type: 'notify', id: notificationKey(one), event: one });
  await c.next((f) => f.type === 'notify_ack');
  await waitFor(() => r.reqs.some((q) => q.url === '/agents') && r.reqs.some((q) => q.url === '/tma') && existsSync(out), 'first deliveries', 5000);
  const ntfy = r.reqs.find((q) => q.url === '/agents')!;
  expect(ntfy.method).toBe('POST');
  expect(ntfy.headers.title).toBe('claude blocked on build1');
  expect(ntfy.headers.priority).toBe('4');
  expect(ntfy.headers.tags).toBe('blocked');
  expect(ntfy.headers.click).toBe(`https://hub.example/#host=build1&server=${encodeURIComponent(SERVER)}&pane=%253`);
  expect(ntfy.body).toBe('build1 main:1.0: claude is waiting for you (permission): Bash');

  const hook = r.reqs.find((q) => q.url === '/tma')!;
  expect(hook.headers['content-type']).toBe('application/json');
  expect(hook.headers['x-tma-signature']).toBe(`sha256=${createHmac('sha256', 's3cret').update(hook.body).digest('hex')}`);
  const doc = JSON.parse(hook.body) as { schema: number; sink: string; events: Record<string, unknown>[]; page_url: string };
  expect(Object.keys(doc)).toEqual(['schema', 'sink', 'delivery', 'events', 'page_url']);
  // No public_url: the page link is the hub's own address.
  expect(doc.page_url).toBe(`${hub.url}/#host=build1&server=${encodeURIComponent(SERVER)}&pane=%253`);
  expect(Object.keys(doc.events[0]!)).toEqual([
    'trigger',
    'server',
    'pane',
    'agent',
    'episode_ms',
    'at',
    'state',
    'detail',
    'locator',
    'repo',
    'branch',
    'context_pct',
    'pending_tool',
    'pending_summary',
    'looking',
    'id',
    'host',
    'received_ms',
  ]);
  expect(doc.events).toHaveLength(1);
  expect(doc.events[0]).toMatchObject({ trigger: 'blocked', host: 'build1', pane: '%3', episode_ms: one.episode_ms, pending_tool: 'Bash' });

  // The same notification again (a resend after a cut): acknowledged, not delivered again.
  const seen = c.received.length;
  c.send({ type: 'notify', id: notificationKey(one), event: one });
  await c.next((f) => f.type === 'notify_ack', 3000, seen);

  // A burst of four panes inside the window: one message per sink.
  const before = r.reqs.length;
  for (const pane of ['%4', '%5', '%6', '%7']) {
    const e = event({ pane, trigger: pane === '%7' ? 'done' : 'blocked', state: pane === '%7' ? 'idle' : 'blocked' });
    c.send({ type: 'notify', id: notificationKey(e), event: e });
  }
  await waitFor(() => r.reqs.length >= before + 2, 'grouped deliveries', 5000);
  await new Promise((res) => setTimeout(res, 800));
  const burst = r.reqs.slice(before);
  expect(burst.filter((q) => q.url === '/agents')).toHaveLength(1);
  expect(burst.filter((q) => q.url === '/tma')).toHaveLength(1);
  const grouped = burst.find((q) => q.url === '/agents')!;
  expect(grouped.headers.title).toBe('3 of 4 agents need you');
  expect(grouped.body.split('\n')).toHaveLength(4);
  expect((JSON.parse(burst.find((q) => q.url === '/tma')!.body) as { events: unknown[] }).events).toHaveLength(3);

  // The first pane is answered: resolved reaches the webhook and the command, never ntfy; a
  // resolved for an episode the hub never saw blocked goes nowhere.
  const n0 = r.reqs.length;
  const res = { ...one, trigger: 'resolved' as const, state: 'working', at: one.at + 5000 };
  c.send({ type: 'notify', id: notificationKey(res), event: res });
  const stray = event({ pane: '%9', trigger: 'resolved', episode_ms: 5 });
  c.send({ type: 'notify', id: notificationKey(stray), event: stray });
  await waitFor(() => r.reqs.length > n0, 'resolved delivery', 5000);
  await new Promise((res2) => setTimeout(res2, 800));
  const after = r.reqs.slice(n0);
  expect(after.map((q) => q.url)).toEqual(['/tma']);
  expect((JSON.parse(after[0]!.body) as { events: { trigger: string; pane: string }[] }).events).toEqual([
    expect.objectContaining({ trigger: 'resolved', pane: '%3' }),
  ]);
  await waitFor(() => readFileSync(out, 'utf8').includes('"resolved"'), 'command got resolved', 5000);
  const cmdDocs = readFileSync(out, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { events: { trigger: string }[] });
  expect(cmdDocs.flatMap((d) => d.events.map((e) => e.trigger))).toEqual(['blocked', 'blocked', 'blocked', 'blocked', 'resolved']);

  // The listing and counters.
  const list = (await (await hub.get('/v1/notifications?limit=3')).json()) as { schema: number; notifications: Record<string, unknown>[] };
  expect(list.schema).toBe(1);
  expect(list.notifications).toHaveLength(3);
  expect(Object.keys(list)).toEqual(['schema', 'notifications']);
  expect(Object.keys(list.notifications[0]!)).toEqual([
    'id',
    'host',
    'trigger',
    'server',
    'pane',
    'agent',
    'episode_ms',
    'at',
    'state',
    'detail',
    'locator',
    'repo',
    'branch',
    'context_pct',
    'pending_tool',
    'pending_summary',
    'looking',
    'received_ms',
    'delivery',
  ]);
  expect(list.notifications[1]).toMatchObject({ trigger: 'resolved', pane: '%3', delivery: { ops: { state: 'sent' }, script: { state: 'sent' } } });
  expect(list.notifications[1]!.delivery).not.toHaveProperty('phone');
  expect((await hub.get('/v1/notifications', null)).status).toBe(401);
  expect((await hub.get('/v1/notifications?limit=0')).status).toBe(400);
  const m = await hub.metricsText();
  expect(m).toContain('tma_hub_notify_sent_total{sink="phone"} 5');
  expect(m).toContain('tma_hub_notify_sent_total{sink="ops"} 5');
  expect(m).toContain('tma_hub_notify_duplicates_total 1');
  expect(hub.logLines.join('')).not.toContain('s3cret');
});
