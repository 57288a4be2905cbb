// A full read of a large fleet goes out in slices (hub/parts-response.ts): the reader gets the
// document as it stood when it asked, byte for byte, and stream readers are served meanwhile.

import { request, type IncomingMessage } from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { EPOCH_A, FakeCollector, SERVER, protoRow, until } from '../support/hub-fake-collector.js';
import { TOKENS, startTestHub, type TestHub } from '../support/hub-harness.js';

let hub: TestHub;
const cleanup: (() => void)[] = [];

beforeEach(async () => {
  // Building a large fleet on a loaded machine can outlast the harness's short heartbeat, and the
  // test's collector sends none: a longer one keeps its link alive.
  hub = await startTestHub({ heartbeatMs: 10_000 });
});

afterEach(async () => {
  for (const f of cleanup.splice(0)) f();
  await hub.close();
});

/** 300 hosts × 20 rows straight into the hub's store: a document of several megabytes. */
function bigFleet(): void {
  for (let h = 0; h < 300; h++) {
    const host = `big${h}`;
    const owner = {};
    hub.store.hello(host, { transport: 'ws', epoch: EPOCH_A, collectorVersion: 'test', actionsAllowed: [] }, owner);
    const rows = Array.from({ length: 20 }, (_, i) =>
      protoRow({ pane: `%${i}`, locator: `work:${i}.0`, repo: `repo-${h}-${i}-${'x'.repeat(200)}` }),
    );
    const r = hub.store.applySnapshot(host, owner, { epoch: EPOCH_A, seq: 0, complete: true, servers: [{ server: SERVER, incarnation: 'i1', rows }] });
    if (!r.ok) throw new Error(r.message);
  }
}

/** GET /v1/agents, handing back the response unread (paused) for the test to drain as it likes. */
function agentsResponse(): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = request(`${hub.url}/v1/agents`, { headers: { authorization: `Bearer ${TOKENS.viewer}` }, agent: false }, (res) => {
      res.pause();
      cleanup.push(() => res.destroy());
      resolve(res);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('GET /v1/agents on a large fleet', () => {
  it('is the document as it stood at the request, byte for byte, while a stalled read lets stream readers get their edges', async () => {
    const c = await FakeCollector.connect(hub.url, TOKENS.build1);
    cleanup.push(() => c.ws.terminate());
    c.hello('build1', EPOCH_A);
    await c.next((f) => f.type === 'welcome');
    c.snapshot(1, [protoRow({ pane: '%1', state: 'working' })]);
    bigFleet();
    await until(() => (hub.store.hostMetrics().find((h) => h.host === 'build1')?.rows === 1 ? true : undefined));

    const ws = new WebSocket(`${hub.url.replace(/^http/, 'ws')}/v1/subscribe?mode=events`, { headers: { authorization: `Bearer ${TOKENS.viewer}` } });
    cleanup.push(() => ws.terminate());
    const events: { pane?: string; to?: string }[] = [];
    ws.on('message', (d) => events.push(JSON.parse(String(d)) as { pane?: string; to?: string }));
    await until(() => (events.length >= 1 ? true : undefined), 10_000);

    // What the hub reads out of its store for this request is the document at that moment.
    let expected = Buffer.alloc(0);
    const parts = hub.store.documentParts.bind(hub.store);
    hub.store.documentParts = (sel) => {
      const p = parts(sel);
      expected = Buffer.concat(p);
      return p;
    };
    // The read starts, takes one chunk and stalls: the hub has most of the body still to send.
    const res = await agentsResponse();
    hub.store.documentParts = parts;
    expect(res.statusCode).toBe(200);
    expect(expected.length).toBeGreaterThan(4_000_000);
    expect(Number(res.headers['content-length'])).toBe(expected.length);
    const chunks: Buffer[] = [];
    let ended = false;
    res.on('data', (b: Buffer) => chunks.push(b));
    res.on('end', () => (ended = true));
    res.resume();
    await until(() => (chunks.length > 0 ? true : undefined), 10_000);
    res.pause();

    // A change during the stalled read reaches the stream reader, and the read is not over yet.
    c.delta(2, [protoRow({ pane: '%1', state: 'blocked', detail: 'permission' })]);
    await until(() => (events.some((e) => e.pane === '%1' && e.to === 'blocked') ? true : undefined), 10_000);
    expect(ended).toBe(false);

    res.resume();
    await until(() => (ended ? true : undefined), 20_000);
    const body = Buffer.concat(chunks);
    expect(body.length).toBe(expected.length);
    expect(body.equals(expected)).toBe(true);
    expect((JSON.parse(body.toString('utf8')) as { agents: unknown[] }).agents).toHaveLength(6001);
    // The next read has the change.
    expect(await (await hub.get('/v1/agents')).text()).toContain('"state":"blocked"');
  });
});
