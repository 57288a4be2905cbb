// Notifications once for the fleet: two real hub processes on one real nats-server, both with the
// same webhook sink, and a collector (frame by frame) linked to hub a. The receiver answers 500
// for the first 30 s. Hub a accepts five blocked episodes and starts retrying them; then b starts
// (so a holds every one of them when it dies) and a is killed with SIGKILL. The collector moves
// to b, offers the five again (repeats) and one more. Every episode must reach the receiver in
// exactly one message (one delivery id), delivered by b once the receiver recovers; the lists of
// both hubs must then read the same; and an answer link one hub minted must work once on the
// other and be refused (409) on the first.

import { createServer, type Server } from 'node:http';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { notificationKey, type FleetNotification } from '../../shared/notify.js';
import { FakeCollector, protoRow, SERVER } from '../support/hub-fake-collector.js';
import { TOKENS } from '../support/hub-harness.js';
import { startHubProcess, type HubProcess } from '../support/hub-process.js';
import { startNats, testFleetKeyFile, type NatsNode } from '../support/nats-server.js';
import { freePort } from '../support/ports.js';
import { sleep, when } from '../support/when.js';

const FAILING_MS = 30_000;
const EPISODE = 1_796_000_000_000;
const PANES = ['%1', '%2', '%3', '%4', '%5'];

interface Taken {
  delivery: string;
  /** The hub whose address the message's links carry: the one that sent it. */
  from: string;
  at: number;
  events: { pane: string; episode_ms: number; actions: { action: string; url: string }[] }[];
}

const toml = (natsUrl: string, sinkUrl: string) => `
[[collector]]
host = "build1"
token = "${TOKENS.build1}"
[[client]]
name = "olga"
token = "${TOKENS.operator}"
role = "operator"
[[notify]]
name = "ops"
kind = "webhook"
url = "${sinkUrl}"
on = ["blocked"]
dwell_secs = 0
cooldown_secs = 0
actions = ["approve"]
[nats]
url = "${natsUrl}"
fleet_key_file = "${testFleetKeyFile()}"
lease_secs = 2
`;

function event(pane: string, episode = EPISODE): FleetNotification {
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
    repo: 'api',
    branch: 'main',
    context_pct: null,
    pending_tool: 'Bash',
    pending_summary: null,
  };
}

const auth = { authorization: `Bearer ${TOKENS.operator}` };
const list = async (url: string) => (await (await fetch(`${url}/v1/notifications`, { headers: auth })).json()) as { notifications: Record<string, unknown>[] };

describe('notifications once for the fleet on NATS', { timeout: 150_000 }, () => {
  let nats: NatsNode;
  let dir: string;
  let server: Server;
  let sinkUrl: string;
  let a: HubProcess;
  let b: HubProcess | null = null;
  let portA: number;
  let failUntil = Number.MAX_SAFE_INTEGER;
  const taken: Taken[] = [];
  const refused: { from: string; at: number }[] = [];
  const collectors: FakeCollector[] = [];
  const timers: ReturnType<typeof setInterval>[] = [];

  /** A collector for build1 on `url`: hello, the six panes blocked, heartbeats, and acts answered "sent". */
  async function link(url: string): Promise<FakeCollector> {
    const c = await FakeCollector.connect(url, TOKENS.build1);
    collectors.push(c);
    c.ws.on('message', (data) => {
      const f = JSON.parse(String(data)) as { type: string; id?: string; action?: string; pane?: string };
      if (f.type !== 'act') return;
      c.send({
        type: 'act_result',
        id: f.id,
        result: { schema: 1, action: f.action, pane: f.pane, outcome: 'sent', exit_code: 0, reason: null, cached: false, host: 'build1', server: SERVER },
      });
    });
    c.hello('build1');
    await c
      .next((f) => f.type === 'welcome', 5000)
      .catch((e: unknown) => {
        throw new Error(`${(e as Error).message}: ${JSON.stringify(c.received)}`);
      });
    c.snapshot(
      1,
      [...PANES, '%6'].map((pane) => protoRow({ pane, host: 'build1', state: 'blocked', episode_ms: EPISODE, since_ms: EPISODE })),
    );
    timers.push(setInterval(() => c.ws.readyState === c.ws.OPEN && c.heartbeat(), 1000));
    return c;
  }

  async function notify(c: FleetNotification[], via: FakeCollector): Promise<void> {
    const from = via.received.length;
    for (const e of c) via.send({ type: 'notify', id: notificationKey(e), event: e });
    for (const e of c) await via.next((f) => f.type === 'notify_ack' && (f.ids as string[]).includes(notificationKey(e)), 10_000, from);
  }

  beforeAll(async () => {
    nats = await startNats();
    dir = mkdtempSync(join(tmpdir(), 'tma-nats-notify-'));
    for (const d of ['a', 'b']) mkdirSync(join(dir, d), { recursive: true });
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        const doc = JSON.parse(body) as { delivery: string; events: Taken['events'] };
        const from = new URL(doc.events[0]?.actions[0]?.url ?? 'http://x:0').port;
        if (Date.now() < failUntil) {
          refused.push({ from, at: Date.now() });
          res.writeHead(500).end();
          return;
        }
        taken.push({ delivery: doc.delivery, from, at: Date.now(), events: doc.events });
        res.writeHead(200).end('{}');
      });
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    sinkUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`;
    portA = await freePort();
    a = await startHubProcess(join(dir, 'a'), portA, toml(nats.url, sinkUrl));
  });

  afterAll(async () => {
    for (const t of timers) clearInterval(t);
    for (const c of collectors) c.ws.terminate();
    await a?.kill();
    await b?.kill();
    server?.close();
    nats?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('a webhook on both hubs failing for the first 30 s, the accepting hub killed meanwhile: exactly one delivery per episode', async () => {
    const t0 = Date.now();
    failUntil = t0 + FAILING_MS;
    const onA = await link(a.url);
    await notify(
      PANES.map((p) => event(p)),
      onA,
    );
    // a holds them all: its first attempt was refused before b (the other puller) existed.
    await when('a first refused attempt from a', () => (refused.some((r) => r.from === String(portA)) ? true : undefined), 10_000);
    b = await startHubProcess(join(dir, 'b'), await freePort(), toml(nats.url, sinkUrl));
    const portB = new URL(b.url).port;
    await sleep(2000);
    const killedAt = Date.now();
    await a.kill();
    // b takes the host once a's claim on it has run out (lease_secs = 2); until then it is busy.
    const onB = await when('b to take the link', () => link(b!.url).catch(() => undefined), 15_000);
    // The collector offers the five again (as one that never saw their acks would) and one more.
    await notify(
      [...PANES, '%6'].map((p) => event(p)),
      onB,
    );
    const want = [...PANES, '%6'].map((p) => `${p}@${EPISODE}`);
    const seen = () => new Set(taken.flatMap((t) => t.events.map((e) => `${e.pane}@${e.episode_ms}`)));
    await when('every episode taken', () => (want.every((k) => seen().has(k)) ? true : undefined), 60_000);
    // Anything still to come (a repeat from a hub that wrongly still held one) comes now.
    await sleep(3000);
    const byEpisode = new Map<string, Set<string>>();
    for (const t of taken)
      for (const e of t.events) byEpisode.set(`${e.pane}@${e.episode_ms}`, (byEpisode.get(`${e.pane}@${e.episode_ms}`) ?? new Set()).add(t.delivery));
    const ids = [...byEpisode].map(([k, s]) => `${k}: ${[...s].join(',')}`);
    console.log(
      `[nats-notify] refused ${refused.length} attempts (${refused.filter((r) => r.from === String(portA)).length} from a); a killed at ${killedAt - t0} ms; ` +
        `${taken.length} messages taken, ${taken.filter((t) => t.from === portB).length} from b, the last at ${Math.max(...taken.map((t) => t.at)) - t0} ms; ${ids.join('; ')}`,
    );
    expect([...byEpisode.keys()].sort()).toEqual([...want].sort());
    for (const [k, s] of byEpisode) expect(s.size, `${k} came in ${s.size} messages`).toBe(1);
    // One message per delivery id, and none taken twice.
    expect(new Set(taken.map((t) => t.delivery)).size).toBe(taken.length);
    const events = taken.reduce((n, t) => n + t.events.length, 0);
    expect(events).toBe(want.length);
    // a's five were finished by b, after a died.
    for (const t of taken) expect(t.from).toBe(portB);
    expect(Math.min(...taken.map((t) => t.at))).toBeGreaterThanOrEqual(t0 + FAILING_MS);
  });

  it('GET /v1/notifications reads the same on both hubs, a restarted one included', async () => {
    a = await startHubProcess(join(dir, 'a'), portA, toml(nats.url, sinkUrl));
    const same = await when(
      'both lists equal, every delivery sent',
      async () => {
        const [la, lb] = await Promise.all([list(a.url), list(b!.url)]);
        const sent = lb.notifications.filter((n) => (n.delivery as Record<string, { state: string }>).ops?.state === 'sent').length;
        return JSON.stringify(la) === JSON.stringify(lb) && sent === 6 ? lb : undefined;
      },
      15_000,
    );
    expect(same.notifications).toHaveLength(6);
    expect(same.notifications.map((n) => n.pane)).toEqual(['%6', ...[...PANES].reverse()]);
    for (const n of same.notifications) expect(n.delivery).toMatchObject({ ops: { state: 'sent', last_error: null } });
  });

  it('an answer link minted by one hub works once on the other; its second use, on the minting hub, is refused 409', async () => {
    const link0 = taken
      .flatMap((t) => t.events)
      .find((e) => e.pane === '%3')!
      .actions.find((x) => x.action === 'approve')!;
    const minted = new URL(link0.url);
    const [minter, other] = minted.port === String(portA) ? [a, b!] : [b!, a];
    const path = minted.pathname;
    const first = await fetch(`${other.url}${path}`, { method: 'POST' });
    const firstBody = (await first.json()) as Record<string, unknown>;
    expect(first.status, JSON.stringify(firstBody)).toBe(200);
    expect(firstBody).toMatchObject({ outcome: 'sent', host: 'build1', pane: '%3' });
    const second = await fetch(`${minter.url}${path}`, { method: 'POST' });
    const secondBody = (await second.json()) as Record<string, unknown>;
    console.log(
      `[nats-notify] link minted on ${minter === a ? 'a' : 'b'}: first use on the other ${first.status}, second on the minter ${second.status} (${String(secondBody.refused)})`,
    );
    expect(second.status).toBe(409);
    expect(secondBody.refused).toBe('used');
    // And a third, back on the hub that fired it: refused as well.
    expect((await fetch(`${other.url}${path}`, { method: 'POST' })).status).toBe(409);
  });
});
