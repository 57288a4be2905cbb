// Rows and frames a hostile (or broken) collector may send: none of them may crash the hub, keep
// it answering 500, or grow its memory without bound.

import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { EPOCH_A, FakeCollector, protoRow, until } from '../support/hub-fake-collector.js';
import { TOKENS, startTestHub, type TestHub } from '../support/hub-harness.js';

let hub: TestHub;
const sockets: WebSocket[] = [];

afterEach(async () => {
  for (const s of sockets.splice(0)) s.terminate();
  await hub?.close();
});

async function collector(): Promise<FakeCollector> {
  const c = await FakeCollector.connect(hub.url, TOKENS.build1);
  sockets.push(c.ws);
  c.hello('build1');
  await c.next((f) => f.type === 'welcome');
  return c;
}

/** A quota nested `depth` levels deep, built without recursion; as JSON text, so no serialiser overflows. */
function deepQuotaRowText(depth: number): string {
  const row = JSON.stringify(protoRow({ pane: '%2', quota: { x: 0 } }));
  return row.replace('{"x":0}', '{"a":'.repeat(depth) + '1' + '}'.repeat(depth));
}

describe('hub ingest: hostile rows', () => {
  it('refuses a quota nested 20,000 levels deep, with a subscriber open, and keeps serving', async () => {
    hub = await startTestHub();
    const sub = new WebSocket(`${hub.url.replace(/^http/, 'ws')}/v1/subscribe`, { headers: { authorization: `Bearer ${TOKENS.viewer}` } });
    sockets.push(sub);
    let subFrames = 0;
    sub.on('message', () => subFrames++);
    await new Promise((r, j) => (sub.once('open', r), sub.once('error', j)));
    const c = await collector();
    c.snapshot(1, [protoRow({ pane: '%1' })]);
    await until(async () => (((await (await hub.get('/v1/agents')).json()) as { agents: unknown[] }).agents.length === 1 ? true : undefined));
    const seen = subFrames;
    c.sendRaw(
      `{"type":"delta","epoch":"${EPOCH_A}","seq":2,"server":"/tmp/tmux-1000/default","incarnation":"inc1","upserts":[${deepQuotaRowText(20_000)}],"removals":[]}`,
    );
    const err = await c.next((f) => f.type === 'error');
    expect(err).toMatchObject({ code: 'bad-frame' });
    expect(String(err.message)).toMatch(/quota/);
    // The hub still answers, with the good row only, and the stream is alive.
    const r = await hub.get('/v1/agents');
    expect(r.status).toBe(200);
    expect(((await r.json()) as { agents: unknown[] }).agents).toHaveLength(1);
    c.delta(2, [protoRow({ pane: '%3' })]);
    await until(() => (subFrames > seen ? true : undefined), 5000);
    expect(sub.readyState).toBe(WebSocket.OPEN);
  });

  it('refuses oversized strings and wide or deep quota objects, field by field', async () => {
    hub = await startTestHub();
    const c = await collector();
    const bad = [
      protoRow({ detail: 'x'.repeat(5000) }),
      protoRow({ agent: 'a'.repeat(100) }),
      protoRow({ quota: Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`k${i}`, i])) }),
      protoRow({ quota: { a: { b: { c: { d: { e: 1 } } } } } }),
      protoRow({ quota: { a: 'y'.repeat(1000) } }),
      { ...protoRow(), future_key: { deep: { deeper: { deepest: { more: { x: 1 } } } } } } as never,
    ];
    c.snapshot(1, []);
    for (const row of bad) {
      const before = c.received.length;
      c.delta(2, [row]);
      const e = await c.next((f) => f.type === 'error', 3000, before);
      expect(e).toMatchObject({ code: 'bad-frame' });
    }
    // Bounded additive keys and a plain quota still pass.
    c.delta(2, [{ ...protoRow({ quota: { pct: 42, window: '5h', resets: [1, 2] } }), future_key: 'ok' } as never]);
    const d = await until(async () => {
      const x = (await (await hub.get('/v1/agents')).json()) as { agents: Record<string, unknown>[] };
      return x.agents.length === 1 ? x : undefined;
    });
    expect(d.agents[0]!.quota).toEqual({ pct: 42, window: '5h', resets: [1, 2] });
  });

  it('cuts off a link whose incomplete snapshot parts exceed its budget', async () => {
    hub = await startTestHub({ pendingSnapshotMaxBytes: 256 * 1024 });
    const c = await collector();
    const rows = Array.from({ length: 200 }, (_, i) => protoRow({ pane: `%${i}`, detail: 'd'.repeat(900) }));
    for (let seq = 1; seq <= 20 && c.closeCode === null; seq++) {
      c.snapshot(1, rows, { complete: false, server: `/tmp/s${seq}` });
      await new Promise((r) => setTimeout(r, 5));
    }
    const err = await c.next((f) => f.type === 'error' && f.code === 'too-large', 5000);
    expect(String(err.message)).toMatch(/incomplete snapshot parts/);
    await c.closed(5000);
  });
});
