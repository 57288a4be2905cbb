// While updates flow the hub encodes changed hosts ahead of reads (FleetStore.prepare, from
// hub/pieces-warmer.ts) and keeps each host's status as bytes of its own. Whatever was encoded
// ahead and whatever the read found undone, a read of `/v1/agents` is byte for byte the JSON of the
// document as it stood at the request, though rows keep changing while its body goes out.

import { request } from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EPOCH_A, FakeCollector, SERVER, protoRow, until } from '../support/hub-fake-collector.js';
import { TOKENS, startTestHub, type TestHub } from '../support/hub-harness.js';

let hub: TestHub;
const cleanup: (() => void)[] = [];

beforeEach(async () => {
  // The test's collector sends no heartbeats: a long interval keeps its link while the fleet loads.
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

describe('GET /v1/agents while updates flow', () => {
  it('is the JSON of the document at the request, byte for byte, with pieces encoded ahead and rows changing during the read', async () => {
    const c = await FakeCollector.connect(hub.url, TOKENS.build1);
    cleanup.push(() => c.ws.terminate());
    c.hello('build1', EPOCH_A);
    await c.next((f) => f.type === 'welcome');
    c.snapshot(1, [0, 1, 2].map((i) => protoRow({ pane: `%${i}`, locator: `w:${i}.0` })));
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
