import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MAX_FRAME_BYTES } from '../../shared/protocol.js';
import { EPOCH_A, EPOCH_B, FakeCollector, SERVER, protoRow, until } from '../support/hub-fake-collector.js';
import { HB_MS, TOKENS, sample, startTestHub, type TestHub } from '../support/hub-harness.js';

let hub: TestHub;
const collectors: FakeCollector[] = [];

async function collector(host: 'build1' | 'laptop', epoch = EPOCH_A): Promise<FakeCollector> {
  const c = await FakeCollector.connect(hub.url, TOKENS[host]);
  collectors.push(c);
  c.hello(host, epoch);
  await c.next((f) => f.type === 'welcome');
  return c;
}

const doc = async (query = '') =>
  (await (await hub.get(`/v1/agents${query}`)).json()) as {
    schema: number;
    agents: Record<string, unknown>[];
    hosts: Record<string, unknown>[];
  };

beforeEach(async () => {
  hub = await startTestHub();
});

afterEach(async () => {
  for (const c of collectors.splice(0)) c.ws.terminate();
  await hub.close();
});

describe('hub ingest: two hosts', () => {
  it("holds both hosts' rows under distinct keys, even with the same server and pane", async () => {
    const a = await collector('build1');
    const b = await collector('laptop');
    a.snapshot(1, [protoRow({ pane: '%1', state: 'blocked' })]);
    b.snapshot(1, [protoRow({ pane: '%1', state: 'working' })]);
    const d = await until(async () => {
      const x = await doc();
      return x.agents.length === 2 ? x : undefined;
    });
    expect(d.agents.map((r) => [r.host, r.server, r.pane, r.state, r.stale])).toEqual([
      ['build1', SERVER, '%1', 'blocked', false],
      ['laptop', SERVER, '%1', 'working', false],
    ]);
    expect(d.hosts.map((h) => [h.host, h.transport, h.reachable, h.stale, h.collector_version])).toEqual([
      ['build1', 'ws', true, false, '0.1.0-test'],
      ['laptop', 'ws', true, false, '0.1.0-test'],
    ]);
    expect((await doc('?host=laptop')).agents.map((r) => r.host)).toEqual(['laptop']);
    expect((await doc('?state=blocked')).agents.map((r) => r.host)).toEqual(['build1']);
  });

  it('refuses a frame carrying a title anywhere and keeps the previous rows', async () => {
    const a = await collector('build1');
    a.snapshot(1, [protoRow({ pane: '%1', state: 'working' })]);
    await until(async () => ((await doc()).agents.length === 1 ? true : undefined));
    a.delta(2, [{ ...protoRow({ pane: '%1', state: 'idle' }), title: 'SECRET-TITLE-TEXT' } as never]);
    const err = await a.next((f) => f.type === 'error');
    expect(err).toMatchObject({ code: 'bad-frame' });
    a.snapshot(3, [], {});
    a.send({ type: 'snapshot', epoch: EPOCH_A, seq: 3, complete: true, title: 'x', servers: [] });
    await a.next((f) => f.type === 'error', 3000, a.received.indexOf(err) + 1);
    // The clean empty snapshot at 3 applied; send a valid delta to prove the link still works.
    a.delta(4, [protoRow({ pane: '%5' })]);
    const d = await until(async () => {
      const x = await doc();
      return x.agents.length === 1 ? x : undefined;
    });
    expect(d.agents[0]).toMatchObject({ pane: '%5', state: 'working' });
    const m = await hub.metricsText();
    expect(sample(m, 'tma_hub_frames_rejected_total{code="bad-frame"}')).toBe(2);
    expect(hub.logLines.join('')).not.toContain('SECRET-TITLE-TEXT');
  });
});

describe('hub ingest: silence and resume', () => {
  it('a silent collector makes its host stale within three heartbeat intervals, rows kept', async () => {
    const a = await collector('build1');
    a.snapshot(1, [protoRow({ pane: '%1', state: 'working' })]);
    const lastSent = Date.now();
    await until(async () => ((await doc()).agents.length === 1 ? true : undefined));
    // Half the dead interval on: still fresh.
    await new Promise((r) => setTimeout(r, (3 * HB_MS) / 2));
    expect((await doc()).hosts[0]).toMatchObject({ host: 'build1', stale: false });
    const d = await until(
      async () => {
        const x = await doc();
        return x.hosts[0]!.stale ? x : undefined;
      },
      3 * HB_MS + 500,
    );
    const elapsed = Date.now() - lastSent;
    expect(elapsed).toBeGreaterThanOrEqual(3 * HB_MS - 20);
    expect(elapsed).toBeLessThan(3 * HB_MS + 400);
    expect(d.agents).toHaveLength(1);
    expect(d.agents[0]).toMatchObject({ state: 'working', stale: true });
    expect(d.hosts[0]).toMatchObject({ reachable: false, stale: true });
    expect(d.hosts[0]!.last_seen_ms).toBeGreaterThanOrEqual(lastSent - 50);
    expect(d.hosts[0]!.last_seen_ms).toBeLessThanOrEqual(lastSent + 200);
    expect((await a.closed()).code).toBe(1008);
  });

  it('reconnect with the same epoch resumes after the last sequence; a new epoch starts fresh', async () => {
    const a = await collector('build1');
    a.snapshot(5, [protoRow({ pane: '%1', state: 'working' })]);
    a.delta(6, [protoRow({ pane: '%1', state: 'blocked' })]);
    await until(async () => ((await doc()).agents[0]?.state === 'blocked' ? true : undefined));
    a.close();
    await until(async () => ((await doc()).hosts[0]!.reachable === false ? true : undefined));

    const again = await FakeCollector.connect(hub.url, TOKENS.build1);
    collectors.push(again);
    again.hello('build1', EPOCH_A);
    expect(await again.next((f) => f.type === 'welcome')).toEqual({ type: 'welcome', protocol: 1, resume_from: 6 });
    again.delta(7, [protoRow({ pane: '%1', state: 'idle', attention: true })]);
    const d = await until(async () => {
      const x = await doc();
      return x.agents[0]?.state === 'idle' ? x : undefined;
    });
    expect(d.agents[0]).toMatchObject({ stale: false, attention: true });
    expect(sample(await hub.metricsText(), 'tma_hub_reconnects_total')).toBe(1);
    again.close();
    await until(async () => ((await doc()).hosts[0]!.reachable === false ? true : undefined));

    const fresh = await FakeCollector.connect(hub.url, TOKENS.build1);
    collectors.push(fresh);
    fresh.hello('build1', EPOCH_B);
    expect(await fresh.next((f) => f.type === 'welcome')).toEqual({ type: 'welcome', protocol: 1, resume_from: null });
    // Until the new snapshot completes, the old rows stay and say they are stale.
    expect((await doc()).agents[0]).toMatchObject({ state: 'idle', stale: true });
    fresh.delta(1, [protoRow({ pane: '%1', state: 'working' })], [], { epoch: EPOCH_B });
    expect(await fresh.next((f) => f.type === 'error')).toMatchObject({ code: 'protocol' });
  });

  it('a sequence gap gets an error and a fresh-snapshot request; the snapshot heals it', async () => {
    const a = await collector('build1');
    a.snapshot(1, [protoRow({ pane: '%1', state: 'working' })]);
    a.delta(3, [protoRow({ pane: '%1', state: 'blocked' })]);
    const err = await a.next((f) => f.type === 'error');
    expect(err.code).toBe('protocol');
    expect(err.message).toMatch(/gap: expected 2, got 3/);
    const welcomes = await until(() => {
      const w = a.received.filter((f) => f.type === 'welcome');
      return w.length === 2 ? w : undefined;
    });
    expect(welcomes[1]).toEqual({ type: 'welcome', protocol: 1, resume_from: null });
    expect((await doc()).agents[0]).toMatchObject({ state: 'working', stale: true });
    a.snapshot(3, [protoRow({ pane: '%1', state: 'blocked' })]);
    await until(async () => {
      const r = (await doc()).agents[0];
      return r?.state === 'blocked' && r.stale === false ? true : undefined;
    });
    expect(sample(await hub.metricsText(), 'tma_hub_resyncs_total')).toBe(1);
  });
});

describe('hub ingest: bad input', () => {
  async function withRows(): Promise<FakeCollector> {
    const a = await collector('build1');
    a.snapshot(1, [protoRow({ pane: '%1', state: 'blocked' })]);
    await until(async () => ((await doc()).agents.length === 1 ? true : undefined));
    return a;
  }

  it('malformed JSON, schema-invalid, unknown type and oversized frames: an error each, counted, store intact, link open', async () => {
    const a = await withRows();
    const before = JSON.stringify((await doc()).agents);
    const cases: [() => void, string][] = [
      [() => a.sendRaw('{"type":"delta",'), 'bad-json'],
      [() => a.send({ type: 'delta', epoch: EPOCH_A, seq: 2, server: SERVER, incarnation: 'inc1', upserts: [{ pane: 'nope' }], removals: [] }), 'bad-frame'],
      [() => a.send({ type: 'gossip', epoch: EPOCH_A }), 'unknown-type'],
      [() => a.sendRaw(JSON.stringify({ type: 'heartbeat', at: 1, pad: 'x'.repeat(MAX_FRAME_BYTES) })), 'too-large'],
    ];
    for (const [act, code] of cases) {
      const from = a.received.length;
      act();
      expect(await a.next((f) => f.type === 'error', 3000, from)).toMatchObject({ type: 'error', code });
    }
    expect(JSON.stringify((await doc()).agents)).toBe(before);
    const m = await hub.metricsText();
    for (const [, code] of cases) expect(sample(m, `tma_hub_frames_rejected_total{code="${code}"}`)).toBe(1);
    // Still open and applying.
    a.delta(2, [protoRow({ pane: '%1', state: 'idle' })]);
    await until(async () => ((await doc()).agents[0]?.state === 'idle' ? true : undefined));
  });

  it('a frame exactly at the size cap is read; one byte over is refused', async () => {
    const a = await withRows();
    const frame = (len: number) => {
      const base = JSON.stringify({ type: 'heartbeat', at: 1, pad: '' });
      return JSON.stringify({ type: 'heartbeat', at: 1, pad: 'x'.repeat(len - base.length) });
    };
    let from = a.received.length;
    a.sendRaw(frame(MAX_FRAME_BYTES));
    // A heartbeat with an unknown key fails the schema, proving the frame got past the size check.
    expect(await a.next((f) => f.type === 'error', 3000, from)).toMatchObject({ code: 'bad-frame' });
    from = a.received.length;
    a.sendRaw(frame(MAX_FRAME_BYTES + 1));
    expect(await a.next((f) => f.type === 'error', 3000, from)).toMatchObject({ code: 'too-large' });
  });

  it('missing, wrong and client tokens are refused at upgrade and counted', async () => {
    expect(await FakeCollector.upgradeStatus(hub.url, null)).toBe(401);
    expect(await FakeCollector.upgradeStatus(hub.url, 'tok-build1-7f3a9d')).toBe(401);
    expect(await FakeCollector.upgradeStatus(hub.url, TOKENS.operator)).toBe(403);
    expect(await FakeCollector.upgradeStatus(hub.url, TOKENS.build1)).toBe(101);
    const m = await hub.metricsText();
    expect(sample(m, 'tma_hub_auth_failures_total{endpoint="/v1/collect",reason="missing"}')).toBe(1);
    expect(sample(m, 'tma_hub_auth_failures_total{endpoint="/v1/collect",reason="unknown"}')).toBe(1);
    expect(sample(m, 'tma_hub_auth_failures_total{endpoint="/v1/collect",reason="wrong-kind"}')).toBe(1);
  });

  it("a token used for another host's name gets host-mismatch and a close; that host's rows stay", async () => {
    await withRows();
    const spoof = await FakeCollector.connect(hub.url, TOKENS.laptop);
    collectors.push(spoof);
    spoof.hello('build1');
    expect(await spoof.next((f) => f.type === 'error')).toMatchObject({ code: 'host-mismatch' });
    const closed = await spoof.closed();
    expect(closed.code).toBe(1008);
    expect(closed.reason).toMatch(/host laptop, not build1/);
    const d = await doc();
    expect(d.agents).toEqual([expect.objectContaining({ host: 'build1', state: 'blocked', stale: false })]);
    expect(d.hosts.find((h) => h.host === 'laptop')).toMatchObject({ reachable: false, last_seen_ms: null });
    expect(sample(await hub.metricsText(), 'tma_hub_frames_rejected_total{code="host-mismatch"}')).toBe(1);
  });

  it('a wrong protocol version is refused and closed', async () => {
    const c = await FakeCollector.connect(hub.url, TOKENS.build1);
    collectors.push(c);
    c.hello('build1', EPOCH_A, 2);
    expect(await c.next((f) => f.type === 'error')).toMatchObject({ code: 'protocol' });
    expect((await c.closed()).code).toBe(1008);
  });

  it('never logs a token', async () => {
    await FakeCollector.upgradeStatus(hub.url, 'not-a-real-token-xyz');
    await withRows();
    await hub.get('/v1/agents', 'wrong-client-token-abc');
    const log = hub.logLines.join('');
    expect(log.length).toBeGreaterThan(0);
    for (const t of [...Object.values(TOKENS), 'not-a-real-token-xyz', 'wrong-client-token-abc']) expect(log).not.toContain(t);
  });
});
