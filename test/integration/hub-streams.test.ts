import { request, type IncomingMessage } from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { EDGE_KEYS } from '../../shared/edges.js';
import { EPOCH_A, FakeCollector, SERVER, protoRow, until } from '../support/hub-fake-collector.js';
import { TOKENS, sample, startTestHub, type TestHub } from '../support/hub-harness.js';

let hub: TestHub;
const cleanup: (() => void)[] = [];

beforeEach(async () => {
  hub = await startTestHub({ subscriberMaxBufferedBytes: 64 * 1024, sseDrainTimeoutMs: 300 });
});

afterEach(async () => {
  for (const f of cleanup.splice(0)) f();
  await hub.close();
});

async function publisher(host: 'build1' | 'laptop' = 'build1'): Promise<FakeCollector> {
  const c = await FakeCollector.connect(hub.url, TOKENS[host]);
  cleanup.push(() => c.ws.terminate());
  c.hello(host, EPOCH_A);
  await c.next((f) => f.type === 'welcome');
  return c;
}

/** An SSE reader collecting each `data:` payload as parsed JSON. */
function sse(path: string, token: string | null = TOKENS.viewer): Promise<{ res: IncomingMessage; events: unknown[] }> {
  return new Promise((resolve, reject) => {
    const u = new URL(path, hub.url);
    const headers: Record<string, string> = { accept: 'text/event-stream' };
    if (token) headers.authorization = `Bearer ${token}`;
    let responded = false;
    const req = request(u, { headers }, (res) => {
      responded = true;
      const events: unknown[] = [];
      res.on('error', () => {});
      let buf = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buf += chunk;
        let i: number;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          for (const line of block.split('\n')) if (line.startsWith('data: ')) events.push(JSON.parse(line.slice(6)));
        }
      });
      cleanup.push(() => res.destroy());
      resolve({ res, events });
    });
    // After the response arrived, a reset is the hub dropping us: the test looks at metrics.
    req.on('error', (e) => (responded ? undefined : reject(e)));
    req.end();
  });
}

function wsSubscribe(path: string, token = TOKENS.viewer): Promise<{ ws: WebSocket; messages: unknown[] }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${hub.url.replace(/^http/, 'ws')}${path}`, { headers: { authorization: `Bearer ${token}` } });
    const messages: unknown[] = [];
    ws.on('message', (d) => messages.push(JSON.parse(String(d))));
    ws.once('open', () => resolve({ ws, messages }));
    ws.once('error', reject);
    cleanup.push(() => ws.terminate());
  });
}

describe('fleet read API', () => {
  it('healthz needs no token and says ok', async () => {
    const r = await hub.get('/healthz', null);
    expect(r.status).toBe(200);
    expect(await r.text()).toBe('{"schema":1,"ok":true}');
  });

  it('/v1/agents: 401 without or with a wrong token, 403 for a collector token, 400 for a bad state', async () => {
    const missing = await hub.get('/v1/agents', null);
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toBe('Bearer');
    expect((await hub.get('/v1/agents', 'nope')).status).toBe(401);
    expect((await hub.get('/v1/agents', TOKENS.build1)).status).toBe(403);
    expect((await hub.get('/v1/agents', TOKENS.operator)).status).toBe(200);
    const bad = await hub.get('/v1/agents?state=sleeping');
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ schema: 1, error: expect.stringMatching(/unknown state "sleeping"/) });
    expect((await hub.get('/v1/agents?colour=red')).status).toBe(400);
    expect((await hub.get('/metrics', null)).status).toBe(401);
    const m = await hub.metricsText();
    expect(sample(m, 'tma_hub_auth_failures_total{endpoint="/v1/agents",reason="missing"}')).toBe(1);
    expect(sample(m, 'tma_hub_auth_failures_total{endpoint="/v1/agents",reason="wrong-kind"}')).toBe(1);
  });

  it('pins the exact key sets of the fleet document, host status and rows', async () => {
    const c = await publisher();
    c.snapshot(1, [protoRow({ pane: '%1' })]);
    const body = await until(async () => {
      const t = await (await hub.get('/v1/agents')).text();
      return t.includes('"%1"') ? t : undefined;
    });
    const d = JSON.parse(body) as { agents: Record<string, unknown>[]; hosts: Record<string, unknown>[] };
    expect(Object.keys(d)).toEqual(['schema', 'agents', 'hosts']);
    expect(Object.keys(d.hosts[0]!)).toEqual([
      'host',
      'transport',
      'reachable',
      'stale',
      'last_seen_ms',
      'reason',
      'collector_version',
      'servers',
      'actions_allowed',
      'schema',
      'last_refusal',
      'clock_offset_ms',
      'actions_by_agent',
      'shares_prompt',
    ]);
    expect(Object.keys(d.agents[0]!)).toEqual([
      'pane',
      'agent',
      'state',
      'detail',
      'since',
      'since_ms',
      'episode_ms',
      'locator',
      'attention',
      'done',
      'session',
      'transcript',
      'permission_request',
      'stamped_at_ms',
      'context',
      'context_at_ms',
      'muted',
      'tokens',
      'quota',
      'cost_usd',
      'repo',
      'branch',
      'worktree',
      'pending_tool',
      'pending_call',
      'pending_summary',
      'server',
      'host',
      'prompt_id',
      'stale',
    ]);
    expect(Object.keys((d.hosts[0]!.servers as Record<string, unknown>[])[0]!)).toEqual(['server', 'incarnation', 'rows']);
    expect(body).not.toContain('"title"');
  });

  it('/metrics reports hosts connected, rows and per-host lag', async () => {
    const c = await publisher();
    c.snapshot(1, [protoRow({ pane: '%1' }), protoRow({ pane: '%2' })]);
    c.heartbeat(Date.now() - 1500, 1);
    const m = await until(async () => {
      const t = await hub.metricsText();
      return sample(t, 'tma_hub_rows') === 2 && t.includes('tma_hub_host_lag_seconds{host="build1"}') ? t : undefined;
    });
    expect(sample(m, 'tma_hub_hosts_connected')).toBe(1);
    expect(sample(m, 'tma_hub_host_rows{host="build1"}')).toBe(2);
    const lag = sample(m, 'tma_hub_host_lag_seconds{host="build1"}')!;
    expect(lag).toBeGreaterThanOrEqual(1.5);
    expect(lag).toBeLessThan(3);
    expect(sample(m, 'tma_hub_host_seq_behind{host="build1"}')).toBe(0);
  });
});

describe('fleet streams', () => {
  it('SSE: the document first, then an edge with host and server after a delta', async () => {
    const c = await publisher();
    c.snapshot(1, [protoRow({ pane: '%1', state: 'working' })]);
    await until(async () => ((await (await hub.get('/v1/agents')).text()).includes('"%1"') ? true : undefined));
    const { res, events } = await sse('/v1/subscribe?events=1');
    expect(res.headers['content-type']).toBe('text/event-stream');
    await until(() => (events.length >= 1 ? true : undefined));
    expect(Object.keys(events[0] as object)).toEqual(['schema', 'agents', 'hosts']);
    c.delta(2, [protoRow({ pane: '%1', state: 'blocked', detail: 'permission' })]);
    await until(() => (events.length >= 2 ? true : undefined));
    const edge = events[1] as Record<string, unknown>;
    expect(Object.keys(edge)).toEqual([...EDGE_KEYS]);
    expect(edge).toMatchObject({ pane: '%1', from: 'working', to: 'blocked', detail: 'permission', host: 'build1', server: SERVER });
    // A change that keeps the class emits no edge.
    c.delta(3, [protoRow({ pane: '%1', state: 'blocked', detail: 'question' })]);
    c.delta(4, [], ['%1']);
    await until(() => (events.length >= 3 ? true : undefined));
    expect(events[2]).toMatchObject({ pane: '%1', from: 'blocked', to: '', host: 'build1' });
    expect(events).toHaveLength(3);
  });

  it('SSE refuses a missing token and a bad selector with JSON errors', async () => {
    const { res } = await sse('/v1/subscribe', null);
    expect(res.statusCode).toBe(401);
    const bad = await sse('/v1/subscribe?state=nap');
    expect(bad.res.statusCode).toBe(400);
  });

  it('WebSocket documents mode: a new document per change, filtered by selector', async () => {
    const c = await publisher();
    const l = await publisher('laptop');
    const { messages } = await wsSubscribe('/v1/subscribe?host=laptop');
    await until(() => (messages.length === 1 ? true : undefined));
    c.snapshot(1, [protoRow({ pane: '%1' })]);
    l.snapshot(1, [protoRow({ pane: '%7' })]);
    const last = await until(() => {
      const m = messages.at(-1) as { agents: { pane: string; host: string }[] };
      return m.agents.length === 1 ? m : undefined;
    });
    expect(last.agents.map((r) => `${r.host}/${r.pane}`)).toEqual(['laptop/%7']);
  });

  it('a WebSocket subscriber that stops reading is dropped and counted; others keep flowing', async () => {
    const c = await publisher();
    const big = Array.from({ length: 300 }, (_, i) => protoRow({ pane: `%${i}`, locator: `s:${i}.0`, repo: 'r'.repeat(200) }));
    c.snapshot(1, big);
    await until(async () => (sample(await hub.metricsText(), 'tma_hub_rows') === 300 ? true : undefined));
    const slow = await wsSubscribe('/v1/subscribe');
    const healthy = await wsSubscribe('/v1/subscribe?events=1');
    await until(() => (slow.messages.length === 1 && healthy.messages.length === 1 ? true : undefined));
    slow.ws.pause();
    let seq = 1;
    let dropped: number | undefined = 0;
    for (let i = 0; i < 300 && !dropped; i++) {
      seq++;
      c.delta(seq, [protoRow({ pane: '%0', locator: 's:0.0', state: seq % 2 ? 'working' : 'idle', repo: 'r'.repeat(200) })]);
      await new Promise((r) => setTimeout(r, 15));
      if (i % 10 === 0) dropped = sample(await hub.metricsText(), 'tma_hub_subscribers_dropped_total{transport="ws"}');
    }
    dropped = await until(async () => {
      const n = sample(await hub.metricsText(), 'tma_hub_subscribers_dropped_total{transport="ws"}');
      return n === 1 ? n : undefined;
    });
    expect(dropped).toBe(1);
    expect(hub.logLines.some((l) => l.includes('subscriber too slow'))).toBe(true);
    // The healthy subscriber saw the last transition.
    const lastState = seq % 2 ? 'working' : 'idle';
    await until(() => ((healthy.messages.at(-1) as { to?: string }).to === lastState ? true : undefined));
    expect(sample(await hub.metricsText(), 'tma_hub_subscribers{transport="ws"}')).toBe(1);
    // The hub still answers promptly.
    expect((await hub.get('/healthz', null)).status).toBe(200);
  });

  it('an SSE subscriber whose stream does not drain in time is dropped and counted', async () => {
    const c = await publisher();
    const big = Array.from({ length: 300 }, (_, i) => protoRow({ pane: `%${i}`, locator: `s:${i}.0`, repo: 'r'.repeat(200) }));
    c.snapshot(1, big);
    await until(async () => (sample(await hub.metricsText(), 'tma_hub_rows') === 300 ? true : undefined));
    const { res, events } = await sse('/v1/subscribe');
    await until(() => (events.length === 1 ? true : undefined));
    res.pause();
    let seq = 1;
    let dropped: number | undefined = 0;
    for (let i = 0; i < 300 && !dropped; i++) {
      seq++;
      c.delta(seq, [protoRow({ pane: '%0', locator: 's:0.0', state: seq % 2 ? 'working' : 'idle', repo: 'r'.repeat(200) })]);
      await new Promise((r) => setTimeout(r, 15));
      if (i % 10 === 0) dropped = sample(await hub.metricsText(), 'tma_hub_subscribers_dropped_total{transport="sse"}');
    }
    await until(async () => (sample(await hub.metricsText(), 'tma_hub_subscribers_dropped_total{transport="sse"}') === 1 ? true : undefined));
    expect(sample(await hub.metricsText(), 'tma_hub_subscribers{transport="sse"}')).toBe(0);
  });
});
