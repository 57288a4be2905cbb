// Who may say "someone is looking" (POST /v1/looking), against a real hub, a collector speaking
// the protocol over a real WebSocket, and a loopback webhook: the attack from issue 34 (a viewer
// token claiming a pane on every server silences its push) is refused and the push goes out; an
// operator's claim holds back that one row only, names a row the hub has, is replaced by the same
// client's next claim, and lapses after PAGE_LOOKING_MS.

import { afterEach, expect, it } from 'vitest';
import { notificationKey, type FleetNotification } from '../../shared/notify.js';
import { PAGE_LOOKING_MS } from '../../hub/notify/looking.js';
import { EPOCH_A, FakeCollector, SERVER, protoRow } from '../support/hub-fake-collector.js';
import { TOKENS, sample, startTestHub, testConfig, type TestHub } from '../support/hub-harness.js';
import { loopbackReceiver, type Receiver } from '../support/notify-rig.js';
import { when } from '../support/when.js';

const OTHER = '/tmp/tmux-1000/other';
const cleanup: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

let episode = 1_796_000_000_000;
function blocked(pane: string): FleetNotification {
  episode += 1000;
  return {
    trigger: 'blocked',
    server: SERVER,
    pane,
    agent: 'claude',
    episode_ms: episode,
    at: episode + 100,
    state: 'blocked',
    detail: 'permission',
    locator: 'main:1.0',
    repo: null,
    branch: null,
    context_pct: null,
    pending_tool: 'Bash',
    pending_summary: null,
  };
}

async function rig(): Promise<{ hub: TestHub; rx: Receiver; c: FakeCollector; skew: { ms: number } }> {
  const rx = await loopbackReceiver();
  cleanup.push(() => rx.close());
  const skew = { ms: 0 };
  const hub = await startTestHub({
    config: testConfig({
      notify: [
        {
          name: 'phone',
          kind: 'webhook',
          url: `${rx.url}/hook`,
          command: null,
          secret: null,
          on: ['blocked'],
          hosts: null,
          pageUrl: null,
          dwellMs: 0,
          cooldownMs: 0,
          whenLooking: 'skip',
        },
      ],
    }),
    clock: () => Date.now() + skew.ms,
    notifyTiming: { groupMs: 50 },
    heartbeatMs: 10_000,
  });
  cleanup.push(() => hub.close());
  const c = await FakeCollector.connect(hub.url, TOKENS.build1);
  cleanup.push(() => c.close());
  c.hello('build1');
  await c.next((f) => f.type === 'welcome');
  // %3 on one server, %4 on two: a `server: null` claim for %4 cannot name one row.
  c.send({
    type: 'snapshot',
    epoch: EPOCH_A,
    seq: 1,
    complete: true,
    servers: [
      {
        server: SERVER,
        incarnation: 'inc1',
        rows: [protoRow({ pane: '%3', state: 'blocked' }), protoRow({ pane: '%4', state: 'blocked' }), protoRow({ pane: '%5', state: 'blocked' })],
      },
      { server: OTHER, incarnation: 'inc2', rows: [protoRow({ pane: '%4', state: 'blocked', server: OTHER })] },
    ],
  });
  await when('the rows at the hub', async () => {
    const doc = (await (await hub.get('/v1/agents')).json()) as { agents: unknown[] };
    return doc.agents.length === 4 ? true : undefined;
  });
  return { hub, rx, c, skew };
}

const claim = (hub: TestHub, token: string, body: unknown) =>
  fetch(`${hub.url}/v1/looking`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

/** Send one blocked notification and wait until the sink either delivered it or held it back. */
async function ring(r: { hub: TestHub; rx: Receiver; c: FakeCollector }, pane: string): Promise<'sent' | 'looking'> {
  const before = r.rx.hooks().length;
  const skippedBefore = sample(await r.hub.metricsText(), 'tma_hub_notify_skipped_total{sink="phone",reason="looking"}') ?? 0;
  const e = blocked(pane);
  const seen = r.c.received.length;
  r.c.send({ type: 'notify', id: notificationKey(e), event: e });
  await r.c.next((f) => f.type === 'notify_ack', 3000, seen);
  return when(`the sink's decision on ${pane}`, async () => {
    if (r.rx.hooks().length > before) return 'sent' as const;
    const skipped = sample(await r.hub.metricsText(), 'tma_hub_notify_skipped_total{sink="phone",reason="looking"}') ?? 0;
    return skipped > skippedBefore ? ('looking' as const) : undefined;
  });
}

it("a viewer's claim, even for a pane on every server, silences nothing", { timeout: 30_000 }, async () => {
  const r = await rig();
  // The attack as issue 34 states it: a viewer token says it is looking at %3 on every server.
  const res = await claim(r.hub, TOKENS.viewer, { host: 'build1', server: null, pane: '%3' });
  expect(await ring(r, '%3')).toBe('sent');
  expect(res.status).toBe(403);
  expect(((await res.json()) as { error: string }).error).toMatch(/viewer/);
});

it("an operator's claim holds back its one row, must name a row the hub has, is replaced by its next, and lapses", { timeout: 30_000 }, async () => {
  const r = await rig();
  // No such row, or a pane on two servers with the server left out: refused, nothing recorded.
  expect((await claim(r.hub, TOKENS.operator, { host: 'build1', server: null, pane: '%9' })).status).toBe(404);
  expect((await claim(r.hub, TOKENS.operator, { host: 'elsewhere', server: SERVER, pane: '%3' })).status).toBe(404);
  const two = await claim(r.hub, TOKENS.operator, { host: 'build1', server: null, pane: '%4' });
  expect(two.status).toBe(409);
  expect(((await two.json()) as { error: string }).error).toMatch(/name the server/);
  expect(await ring(r, '%4')).toBe('sent');

  // `server: null` naming exactly one row: that row, and only it, is held back.
  expect((await claim(r.hub, TOKENS.operator, { host: 'build1', server: null, pane: '%3' })).status).toBe(204);
  expect(await ring(r, '%3')).toBe('looking');
  expect(await ring(r, '%5')).toBe('sent');

  // The same client's next claim replaces its last: one token holds one row at a time.
  expect((await claim(r.hub, TOKENS.operator, { host: 'build1', server: SERVER, pane: '%5' })).status).toBe(204);
  expect(await ring(r, '%5')).toBe('looking');
  expect(await ring(r, '%3')).toBe('sent');

  // Not repeated, the claim lapses.
  r.skew.ms += PAGE_LOOKING_MS + 1000;
  expect(await ring(r, '%5')).toBe('sent');
});
