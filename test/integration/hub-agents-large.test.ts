// A full read of a large fleet goes out in slices (hub/http/parts-response.ts): the reader gets the
// document as it stood when it asked, byte for byte, and stream readers are served meanwhile.
// While updates flow the hub encodes changed hosts ahead of reads (FleetStore.prepare, from
// hub/store/warmer.ts) and keeps each host's status as bytes of its own; whatever was encoded
// ahead and whatever a read found undone, the body is still that document's JSON.

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

const STATES = ['working', 'idle', 'blocked', 'unknown'] as const;

/** GET /v1/agents, read in small bites with pauses, so the hub's loop runs updates mid-body. */
function slowRead(): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const req = request(`${hub.url}/v1/agents`, { headers: { authorization: `Bearer ${TOKENS.viewer}` }, agent: false }, (res) => {
      cleanup.push(() => res.destroy());
      const chunks: Buffer[] = [];
      let n = 0;
      res.on('data', (b: Buffer) => {
        chunks.push(b);
        if (++n % 8 === 0) {
          res.pause();
          setTimeout(() => res.resume(), 3);
        }
      });
      res.on('end', () => resolve(Buffer.concat(chunks)));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** 300 hosts × 20 rows straight into the hub's store: a document of several megabytes. */
function bigFleet(): void {
  for (let h = 0; h < 300; h++) {
    const host = `big${h}`;
    const owner = {};
    hub.store.hello(host, { transport: 'ws', epoch: EPOCH_A, collectorVersion: 'test', actionsAllowed: [] }, owner);
    const rows = Array.from({ length: 20 }, (_, i) => protoRow({ pane: `%${i}`, locator: `work:${i}.0`, repo: `repo-${h}-${i}-${'x'.repeat(200)}` }));
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

  it('is the JSON of the document at the request, byte for byte, with pieces encoded ahead and rows changing during the read', async () => {
    const c = await FakeCollector.connect(hub.url, TOKENS.build1);
    cleanup.push(() => c.ws.terminate());
    c.hello('build1', EPOCH_A);
    await c.next((f) => f.type === 'welcome');
    c.snapshot(
      1,
      [0, 1, 2].map((i) => protoRow({ pane: `%${i}`, locator: `w:${i}.0` })),
    );
    await until(() => (hub.store.hostMetrics().find((h) => h.host === 'build1')?.rows === 3 ? true : undefined));

    // 150 hosts × 20 rows straight into the store, as the bench's collectors would leave it.
    const owners = new Map<string, object>();
    const seqs = new Map<string, number>();
    for (let h = 0; h < 150; h++) {
      const host = `many${h}`;
      const owner = {};
      owners.set(host, owner);
      seqs.set(host, 0);
      hub.store.hello(host, { transport: 'ws', epoch: EPOCH_A, collectorVersion: 'test', actionsAllowed: [] }, owner);
      const rows = Array.from({ length: 20 }, (_, i) => protoRow({ pane: `%${i}`, locator: `work:${i}.0`, repo: `repo-${h}-${'r'.repeat(120)}` }));
      const r = hub.store.applySnapshot(host, owner, { epoch: EPOCH_A, seq: 0, complete: true, servers: [{ server: SERVER, incarnation: 'i1', rows }] });
      if (!r.ok) throw new Error(r.message);
    }

    // What each read took from the store, and the document's own JSON at that moment.
    const taken: { parts: Buffer; json: string }[] = [];
    const parts = hub.store.documentParts.bind(hub.store);
    hub.store.documentParts = (sel) => {
      const p = parts(sel);
      taken.push({ parts: Buffer.concat(p), json: JSON.stringify(hub.store.document(sel)) });
      return p;
    };
    cleanup.push(() => (hub.store.documentParts = parts));
    let warmed = 0;
    const prepare = hub.store.prepare.bind(hub.store);
    hub.store.prepare = () => {
      const n = prepare();
      warmed += n;
      return n;
    };
    cleanup.push(() => (hub.store.prepare = prepare));

    // Updates from the hub's own loop (rows, a row's state and count) and over the collector's link.
    let step = 0;
    const churn = setInterval(() => {
      for (let k = 0; k < 5; k++) {
        step++;
        const host = `many${step % 150}`;
        const seq = seqs.get(host)! + 1;
        seqs.set(host, seq);
        const pane = `%${step % 23}`;
        const removals = step % 11 === 0 ? [`%${(step * 7) % 23}`] : [];
        const upserts = removals.length ? [] : [protoRow({ pane, locator: `work:${pane.slice(1)}.0`, state: STATES[step % 4], tokens: step })];
        hub.store.applyDelta(host, owners.get(host)!, { epoch: EPOCH_A, seq, server: SERVER, incarnation: 'i1', upserts, removals });
        hub.store.noteHeartbeat(host, owners.get(host)!, Date.now() - (step % 9), seq);
      }
    }, 2);
    cleanup.push(() => clearInterval(churn));
    let linkSeq = 1;
    const linkChurn = setInterval(() => c.delta(++linkSeq, [protoRow({ pane: '%1', locator: 'w:1.0', state: STATES[linkSeq % 4] })]), 7);
    cleanup.push(() => clearInterval(linkChurn));

    const bodies: Buffer[] = [];
    for (let i = 0; i < 6; i++) {
      bodies.push(await slowRead());
      await new Promise((res) => setTimeout(res, 60));
    }
    clearInterval(churn);
    clearInterval(linkChurn);

    expect(taken).toHaveLength(6);
    for (let i = 0; i < 6; i++) {
      expect(taken[i]!.parts.toString('utf8')).toBe(taken[i]!.json);
      expect(bodies[i]!.equals(taken[i]!.parts)).toBe(true);
    }
    // The reads saw different documents: the rows did change between (and during) them.
    expect(new Set(taken.map((t) => t.json)).size).toBeGreaterThan(1);
    // And the warmer did encode hosts ahead of the reads after the first.
    expect(warmed).toBeGreaterThan(0);
  }, 60_000);
});
