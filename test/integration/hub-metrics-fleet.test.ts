// The fleet in /metrics: a real hub, two collectors over real WebSockets with agents in every
// class, a host that never connects and one with a hostile name; the exposition is checked by
// Prometheus's own linter (promtool) and read series by series.

import { spawnSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { CLASSES } from '../../shared/tokens.js';
import { FakeCollector, SERVER, protoRow, until } from '../support/hub-fake-collector.js';
import { TOKENS, sample, startTestHub, testConfig, type TestHub } from '../support/hub-harness.js';

let hub: TestHub | null = null;
const collectors: FakeCollector[] = [];

afterEach(async () => {
  for (const c of collectors.splice(0)) c.ws.terminate();
  await hub?.close();
  hub = null;
});

/**
 * A host name no config file or hello would accept, declared to the hub directly (a host the store
 * holds is a label value whatever its source): the text format must survive it.
 */
const HOSTILE = 'evil"} 1\nfake_series{x="\\';
const HOSTILE_TOKEN = 'tok-hostile-0d0d0d';

function promtool(text: string): { status: number | null; out: string } {
  const r = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8', timeout: 10_000 });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

async function linked(h: TestHub, host: string, token: string): Promise<FakeCollector> {
  const c = await FakeCollector.connect(h.url, token);
  collectors.push(c);
  c.hello(host);
  await c.next((f) => f.type === 'welcome');
  return c;
}

const rowsHeld = async (h: TestHub, n: number) =>
  until(async () => (((await (await h.get('/v1/agents')).json()) as { agents: unknown[] }).agents.length === n ? true : undefined));

const T_OLD = 1_700_000_000_000;
const T_NEW = 1_700_000_600_000;

async function twoHosts(over: Parameters<typeof testConfig>[0] = {}): Promise<TestHub> {
  hub = await startTestHub({
    version: '9.8.7-test',
    config: testConfig({
      collectors: [
        { host: 'build1', token: TOKENS.build1 },
        { host: 'laptop', token: TOKENS.laptop },
        { host: 'spare', token: 'tok-spare-never-connects' },
        { host: HOSTILE, token: HOSTILE_TOKEN },
      ],
      ...over,
    }),
  });
  const a = await linked(hub, 'build1', TOKENS.build1);
  // Every class on build1, two of them blocked (the older one counts), two working.
  a.snapshot(1, [
    protoRow({ pane: '%1', state: 'blocked', since_ms: T_NEW, since: T_NEW }),
    protoRow({ pane: '%2', state: 'blocked', since_ms: T_OLD, since: T_OLD }),
    protoRow({ pane: '%3', state: 'working' }),
    protoRow({ pane: '%4', state: 'working' }),
    protoRow({ pane: '%5', state: 'idle', attention: true, done: true }),
    protoRow({ pane: '%6', state: 'idle' }),
    protoRow({ pane: '%7', state: 'unknown' }),
  ]);
  const b = await linked(hub, 'laptop', TOKENS.laptop);
  b.snapshot(1, [protoRow({ pane: '%1', state: 'working', agent: 'codex' })]);
  await rowsHeld(hub, 8);
  return hub;
}

describe('/metrics: the fleet', () => {
  it('agents by host and class (zeros included), host up, oldest blocked, build info; promtool accepts it', async () => {
    const h = await twoHosts();
    const text = await h.metricsText();
    const lint = promtool(text);
    expect(lint.out).toBe('');
    expect(lint.status).toBe(0);

    expect(sample(text, `tma_build_info{version="9.8.7-test",node="${process.version}"}`)).toBe(1);
    const agents = (host: string) => Object.fromEntries(CLASSES.map((c) => [c, sample(text, `tma_hub_agents{host="${host}",state="${c}"}`)]));
    expect(agents('build1')).toEqual({ blocked: 2, working: 2, done: 1, idle: 1, unknown: 1 });
    expect(agents('laptop')).toEqual({ blocked: 0, working: 1, done: 0, idle: 0, unknown: 0 });
    expect(agents('spare')).toEqual({ blocked: 0, working: 0, done: 0, idle: 0, unknown: 0 });

    expect(sample(text, 'tma_hub_host_up{host="build1"}')).toBe(1);
    expect(sample(text, 'tma_hub_host_up{host="laptop"}')).toBe(1);
    expect(sample(text, 'tma_hub_host_up{host="spare"}')).toBe(0);

    expect(sample(text, 'tma_hub_host_oldest_blocked_timestamp_seconds{host="build1"}')).toBe(T_OLD / 1000);
    expect(text).not.toContain('tma_hub_host_oldest_blocked_timestamp_seconds{host="laptop"}');
    expect(text).not.toContain('tma_hub_host_oldest_blocked_timestamp_seconds{host="spare"}');

    // Each series named once in HELP and once in TYPE.
    for (const name of ['tma_build_info', 'tma_hub_agents', 'tma_hub_host_up', 'tma_hub_host_oldest_blocked_timestamp_seconds', 'tma_hub_act_total']) {
      expect(text.split('\n').filter((l) => l.startsWith(`# HELP ${name} `))).toHaveLength(1);
      expect(text.split('\n').filter((l) => l.startsWith(`# TYPE ${name} `))).toHaveLength(1);
    }
    // No per-pane series unless asked for.
    expect(text).not.toContain('tma_hub_pane_state');
  });

  it('a hostile host name is escaped: one line per sample, no series injected', async () => {
    const h = await twoHosts();
    const text = await h.metricsText();
    expect(promtool(text).status).toBe(0);
    const escaped = 'evil\\"} 1\\nfake_series{x=\\"\\\\';
    expect(sample(text, `tma_hub_host_up{host="${escaped}"}`)).toBe(0);
    expect(sample(text, `tma_hub_agents{host="${escaped}",state="blocked"}`)).toBe(0);
    expect(text.split('\n').some((l) => l.startsWith('fake_series'))).toBe(false);
  });

  it('the classes follow the fleet at scrape time: a pane unblocks, a host goes down', async () => {
    const h = await twoHosts();
    const a = collectors[0]!;
    a.delta(2, [protoRow({ pane: '%2', state: 'working' }), protoRow({ pane: '%1', state: 'idle' })]);
    await until(async () => (sample(await h.metricsText(), 'tma_hub_agents{host="build1",state="blocked"}') === 0 ? true : undefined));
    const text = await h.metricsText();
    expect(sample(text, 'tma_hub_agents{host="build1",state="working"}')).toBe(3);
    expect(sample(text, 'tma_hub_agents{host="build1",state="idle"}')).toBe(2);
    expect(text).not.toContain('tma_hub_host_oldest_blocked_timestamp_seconds{host="build1"}');
    collectors[1]!.ws.terminate();
    await until(async () => (sample(await h.metricsText(), 'tma_hub_host_up{host="laptop"}') === 0 ? true : undefined));
  });

  it('act outcomes are counted by outcome, every outcome present, an unknown one as other', async () => {
    const h = await twoHosts();
    const before = await h.metricsText();
    for (const o of ['sent', 'replied', 'spawned', 'exited', 'timeout', 'refused', 'vanished', 'error', 'other']) {
      expect(sample(before, `tma_hub_act_total{outcome="${o}"}`)).toBe(0);
    }
    const post = (body: unknown) =>
      fetch(`${h.url}/v1/act`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKENS.operator}` },
        body: JSON.stringify(body),
      });
    // Not in the host's actions_allowed: the hub refuses it itself.
    expect(((await (await post({ host: 'build1', pane: '%1', action: 'reject' })).json()) as { outcome: string }).outcome).toBe('refused');
    // Routed, answered by the host: once as sent, once with an outcome outside the closed set.
    const a = collectors[0]!;
    for (const outcome of ['sent', 'made-up']) {
      const from = a.received.length;
      const pending = post({ host: 'build1', pane: '%1', action: 'approve' });
      const frame = await a.next((f) => f.type === 'act', 3000, from);
      a.send({
        type: 'act_result',
        id: frame.id,
        result: { schema: 1, action: 'approve', pane: '%1', outcome, exit_code: 0, reason: null, host: 'build1', server: SERVER },
      });
      expect((await pending).status).toBe(200);
    }
    const after = await h.metricsText();
    expect(sample(after, 'tma_hub_act_total{outcome="refused"}')).toBe(1);
    expect(sample(after, 'tma_hub_act_total{outcome="sent"}')).toBe(1);
    expect(sample(after, 'tma_hub_act_total{outcome="other"}')).toBe(1);
    expect(after).not.toContain('made-up');
    expect(promtool(after).status).toBe(0);
  });

  it('[metrics] per_pane: one series per pane with its class, names escaped, no titles', async () => {
    const h = await twoHosts({ metrics: { perPane: true } });
    const a = collectors[0]!;
    a.delta(2, [protoRow({ pane: '%8', state: 'working', agent: 'odd"agent\\x' })]);
    await rowsHeld(h, 9);
    const text = await h.metricsText();
    const lint = promtool(text);
    expect(lint.out).toBe('');
    expect(lint.status).toBe(0);
    const pane = (host: string, p: string, agent: string, state: string) =>
      sample(text, `tma_hub_pane_state{host="${host}",server="${SERVER}",pane="${p}",agent="${agent}",state="${state}"}`);
    expect(pane('build1', '%2', 'claude', 'blocked')).toBe(1);
    expect(pane('build1', '%5', 'claude', 'done')).toBe(1);
    expect(pane('laptop', '%1', 'codex', 'working')).toBe(1);
    expect(pane('build1', '%8', 'odd\\"agent\\\\x', 'working')).toBe(1);
    expect(text.split('\n').filter((l) => l.startsWith('tma_hub_pane_state{'))).toHaveLength(9);
    expect(text).not.toMatch(/title/);
    // A reload that drops the setting drops the series, without a restart.
    const config = testConfig({
      collectors: testConfig().collectors.concat({ host: 'spare', token: 'tok-spare-never-connects' }, { host: HOSTILE, token: HOSTILE_TOKEN }),
    });
    await h.reload(config);
    expect(await h.metricsText()).not.toContain('tma_hub_pane_state');
  });
});
