// POST /v1/act on a real hub, with a frame-level collector stand-in: what the hub sends, what it
// answers when the host answers, lies, stays silent or drops the link, and what it refuses alone.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeCollector, SERVER, protoRow, until } from '../support/hub-fake-collector.js';
import { TOKENS, startTestHub, type TestHub } from '../support/hub-harness.js';

const ACT_TIMEOUT_MS = 400;
let hub: TestHub;
const collectors: FakeCollector[] = [];

beforeEach(async () => {
  hub = await startTestHub({ actTimeoutMs: ACT_TIMEOUT_MS });
});

afterEach(async () => {
  for (const c of collectors.splice(0)) c.ws.terminate();
  await hub.close();
});

/** build1 connected, announcing `approve` only, with pane %1 on SERVER. */
async function build1(): Promise<FakeCollector> {
  const c = await FakeCollector.connect(hub.url, TOKENS.build1);
  collectors.push(c);
  c.hello('build1');
  await c.next((f) => f.type === 'welcome');
  c.snapshot(1, [protoRow({ pane: '%1', state: 'blocked', host: 'build1' })]);
  await until(async () => (((await (await hub.get('/v1/agents')).json()) as { agents: unknown[] }).agents.length === 1 ? true : undefined));
  return c;
}

const post = (body: unknown, token: string | null = TOKENS.operator, raw?: string) =>
  fetch(`${hub.url}/v1/act`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token === null ? {} : { authorization: `Bearer ${token}` }) },
    body: raw ?? JSON.stringify(body),
  });

const approve = { host: 'build1', pane: '%1', action: 'approve' };

describe('POST /v1/act', () => {
  it('refuses bad bodies with 400 and unknown hosts with 404', async () => {
    expect((await post(null, TOKENS.operator, '{not json')).status).toBe(400);
    expect((await post({ ...approve, force: true })).status).toBe(400);
    expect((await post({ host: 'build1', action: 'approve' })).status).toBe(400);
    const unknown = await post({ ...approve, host: 'nowhere' });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ schema: 1, error: expect.stringContaining('nowhere') });
  });

  it('a collector token is not a client: 403', async () => {
    expect((await post(approve, TOKENS.build1)).status).toBe(403);
  });

  it('a configured host that never connected: undelivered, at once', async () => {
    const res = await post({ ...approve, server: SERVER });
    expect(res.status).toBe(200);
    // Never connected, so it has refused nothing: it is only out of reach.
    expect(await res.json()).toMatchObject({ outcome: 'timeout', reason: 'undelivered', exit_code: 124, host: 'build1', server: SERVER });
  });

  it('forwards one frame with the caller, binders and a generated slot, and passes the answer on as routed', async () => {
    const c = await build1();
    const t0 = Date.now();
    const pending = post({ ...approve, expect_episode_ms: 77 });
    const frame = await c.next((f) => f.type === 'act');
    expect(frame).toMatchObject({
      action: 'approve',
      server: SERVER,
      pane: '%1',
      expect_episode_ms: 77,
      expect_permission_request: null,
      principal: 'olga',
    });
    expect(frame.slot).toMatch(/^hub-[0-9a-f]{24}$/);
    expect(frame.deadline_ms).toBeGreaterThanOrEqual(t0 + ACT_TIMEOUT_MS);
    expect(frame.deadline_ms).toBeLessThanOrEqual(Date.now() + ACT_TIMEOUT_MS);
    // A collector that mislabels where it ran is corrected, not believed.
    c.send({
      type: 'act_result',
      id: frame.id,
      result: { schema: 1, action: 'approve', pane: '%1', outcome: 'sent', exit_code: 0, reason: null, cached: false, host: 'laptop', server: '/x' },
    });
    const res = await pending;
    expect(res.status).toBe(200);
    // The slot the hub made up comes back, so a caller can ask again with it.
    expect(await res.json()).toEqual({
      schema: 1,
      action: 'approve',
      pane: '%1',
      outcome: 'sent',
      exit_code: 0,
      reason: null,
      cached: false,
      host: 'build1',
      server: SERVER,
      slot: frame.slot,
    });
    expect(c.received.filter((f) => f.type === 'act')).toHaveLength(1);
    const audit = hub.logLines.filter((l) => l.includes('"audit":"remote-act"'));
    expect(audit).toHaveLength(1);
    expect(JSON.parse(audit[0]!)).toMatchObject({
      who: 'olga',
      host: 'build1',
      server: SERVER,
      pane: '%1',
      action: 'approve',
      expect_episode_ms: 77,
      outcome: 'sent',
    });
  });

  it("a caller's slot goes to the host unchanged", async () => {
    const c = await build1();
    const pending = post({ ...approve, slot: 'my.slot:1' });
    const frame = await c.next((f) => f.type === 'act');
    expect(frame.slot).toBe('my.slot:1');
    c.send({
      type: 'act_result',
      id: frame.id,
      result: { schema: 1, action: 'approve', pane: '%1', outcome: 'sent', exit_code: 0, reason: null, cached: true, host: 'build1', server: SERVER },
    });
    expect(await (await pending).json()).toMatchObject({ cached: true });
  });

  it('an action the host does not announce is refused without a frame', async () => {
    const c = await build1();
    const res = await post({ ...approve, action: 'deny' });
    expect(await res.json()).toMatchObject({ outcome: 'refused', reason: 'not-allowed', exit_code: 4, host: 'build1', server: SERVER });
    await new Promise((r) => setTimeout(r, 100));
    expect(c.received.filter((f) => f.type === 'act')).toHaveLength(0);
  });

  it('no answer: fired-unknown (exit 124) once the deadline passes, not before, and never a second frame', async () => {
    const c = await build1();
    const t0 = Date.now();
    const res = await post(approve);
    const took = Date.now() - t0;
    expect(await res.json()).toMatchObject({ outcome: 'timeout', reason: 'fired-unknown', exit_code: 124, host: 'build1', server: SERVER });
    expect(took).toBeGreaterThanOrEqual(ACT_TIMEOUT_MS - 20);
    expect(took).toBeLessThan(ACT_TIMEOUT_MS + 2000);
    await new Promise((r) => setTimeout(r, 200));
    expect(c.received.filter((f) => f.type === 'act')).toHaveLength(1);
  });

  it('the link dropping after delivery: fired-unknown at once; a late answer is ignored', async () => {
    const c = await build1();
    const t0 = Date.now();
    const pending = post(approve);
    await c.next((f) => f.type === 'act');
    c.ws.terminate();
    const body = await (await pending).json();
    expect(body).toMatchObject({ outcome: 'timeout', reason: 'fired-unknown', exit_code: 124 });
    expect(Date.now() - t0).toBeLessThan(ACT_TIMEOUT_MS);
    // With the link gone the next request is not sent at all.
    expect(await (await post(approve)).json()).toMatchObject({ outcome: 'timeout', reason: 'undelivered', exit_code: 124 });
  });

  it('a pane id on two servers of a host: 409 naming both', async () => {
    const c = await build1();
    c.send({
      type: 'snapshot',
      epoch: '0123456789abcdef',
      seq: 2,
      complete: true,
      servers: [
        { server: SERVER, incarnation: 'inc1', rows: [protoRow({ pane: '%1', host: 'build1' })] },
        { server: '/tmp/tmux-1000/work', incarnation: 'inc2', rows: [protoRow({ pane: '%1', host: 'build1', server: '/tmp/tmux-1000/work' })] },
      ],
    });
    await until(async () => (((await (await hub.get('/v1/agents')).json()) as { agents: unknown[] }).agents.length === 2 ? true : undefined));
    const res = await post(approve);
    expect(res.status).toBe(409);
    const body = (await res.json()) as { error: string; candidates: { server: string }[] };
    expect(body.candidates.map((x) => x.server).sort()).toEqual([SERVER, '/tmp/tmux-1000/work']);
    expect(c.received.filter((f) => f.type === 'act')).toHaveLength(0);
  });
});
