// A real collector given several real hubs (`tma collector --hub A,B`): when the linked hub dies
// (kill -9) it is publishing on the next within 5 s; a hub that refuses it (wrong token, the host
// held by a live link) is passed over with a line that says so; a hub named in a welcome is
// learned; and once on a hub that works it stays there, even when the first one comes back.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { FleetDocument, HostStatus } from '../../shared/fleet.js';
import { startHubProcess, type HubProcess } from '../support/hub-process.js';
import { freePort } from '../support/ports.js';
import { REPO, ScratchTmux, tma, waitFor } from '../support/scratch-tmux.js';

const SCREENS = join(REPO, 'test/integration/screens');
const HOST = 'fo-box';
const TOKEN = 'tok-failover-collector-7c2e';
const VIEWER = 'tok-failover-viewer-1a9f';

let dir = '';
let scratch: ScratchTmux | null = null;
const cleanups: (() => void | Promise<void>)[] = [];

afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) {
    try {
      await c();
    } catch {
      // keep tearing down the rest
    }
  }
  scratch?.kill();
  scratch = null;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = '';
});

function hubToml(token: string, extra = ''): string {
  return [`[[collector]]\nhost = "${HOST}"\ntoken = "${token}"`, `[[client]]\nname = "viewer"\ntoken = "${VIEWER}"\nrole = "viewer"`, extra].join('\n');
}

async function hub(name: string, port: number, toml: string): Promise<HubProcess> {
  const d = join(dir, name);
  mkdirSync(d, { recursive: true });
  const h = await startHubProcess(d, port, toml);
  cleanups.push(() => h.kill());
  return h;
}

interface Collector {
  child: ChildProcess;
  out: () => string;
}

function collector(hubs: string, env: NodeJS.ProcessEnv): Collector {
  const tokenFile = join(dir, 'collector.token');
  writeFileSync(tokenFile, `${TOKEN}\n`, { mode: 0o600 });
  const child = spawn(
    process.execPath,
    [join(REPO, 'bin/tma.js'), 'collector', '--hub', hubs, '--token-file', tokenFile, '--host-name', HOST, '--socket-name', scratch!.name, '--interval', '30'],
    { env: { ...process.env, ...env, TMA_LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  });
  return { child, out: () => out };
}

async function fleet(port: number): Promise<FleetDocument | null> {
  const res = await fetch(`http://127.0.0.1:${port}/v1/agents`, { headers: { authorization: `Bearer ${VIEWER}` }, signal: AbortSignal.timeout(2000) }).catch(
    () => null,
  );
  return res?.status === 200 ? ((await res.json()) as FleetDocument) : null;
}

const hostOf = (doc: FleetDocument | null): HostStatus | undefined => doc?.hosts.find((h) => h.host === HOST);

/** The hub shows this host linked and publishing: reachable, with the pane's row in `state`. */
async function publishing(port: number, pane: string, state: string): Promise<boolean> {
  const doc = await fleet(port);
  const h = hostOf(doc);
  return h?.reachable === true && doc!.agents.some((a) => a.host === HOST && a.pane === pane && a.state === state);
}

async function until(cond: () => Promise<boolean>, what: string, timeoutMs: number, log: () => string): Promise<number> {
  const t0 = Date.now();
  for (;;) {
    if (await cond()) return Date.now() - t0;
    if (Date.now() - t0 > timeoutMs) throw new Error(`${what} within ${timeoutMs} ms; collector log: ${log().slice(-2000)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function setup(): Promise<{ pane: string; env: NodeJS.ProcessEnv; hook: (kind: string) => Promise<unknown> }> {
  dir = mkdtempSync(join(tmpdir(), 'tma-failover-'));
  scratch = new ScratchTmux('cfo');
  const pane = scratch.start();
  await scratch.standIn(pane, 'claude', join(SCREENS, 'claude-idle-marked.txt'));
  const runtime = join(dir, 'run');
  const env = { TMUX: '', TMUX_PANE: '', XDG_RUNTIME_DIR: runtime, XDG_CONFIG_HOME: join(dir, 'cfg'), XDG_STATE_HOME: join(dir, 'st') };
  const hook = (kind: string) =>
    tma(['event', '--agent', 'claude', '--kind', kind, '--socket-name', scratch!.name], { env: { TMUX_PANE: pane, XDG_RUNTIME_DIR: runtime } });
  return { pane, env, hook };
}

it('moves to the next hub within 5 s of a kill -9 and publishes there', async () => {
  const { pane, env, hook } = await setup();
  const [pa, pb] = [await freePort(), await freePort()];
  const a = await hub('a', pa, hubToml(TOKEN));
  await hub('b', pb, hubToml(TOKEN));
  const c = collector(`ws://127.0.0.1:${pa},ws://127.0.0.1:${pb}`, env);

  // The order given is kept: the first hub gets the link.
  await until(() => publishing(pa, pane, 'idle'), 'the collector publishing on the first hub', 20_000, c.out);
  expect(hostOf(await fleet(pb))?.reachable).toBe(false);

  const killedAt = Date.now();
  await a.kill();
  const took = await until(() => publishing(pb, pane, 'idle'), 'the collector publishing on the second hub', 5000, c.out);
  const linkedAfterMs = Date.now() - killedAt;
  console.log(`failover: linked and publishing on the other hub ${linkedAfterMs} ms after kill -9 (poll ${took} ms)`);
  expect(linkedAfterMs).toBeLessThan(5000);

  // Publishing, not only linked: a change made now reaches the second hub.
  await hook('UserPromptSubmit');
  await until(() => publishing(pb, pane, 'working'), 'a change after failover on the second hub', 3000, c.out);
  expect(c.out()).toMatch(new RegExp(`hub ws://127\\.0\\.0\\.1:${pa}/v1/collect link .*; trying ws://127\\.0\\.0\\.1:${pb}/v1/collect in \\d+ ms`));
});

it('learns the hubs a welcome names, fails over to one, and stays there when the first returns', async () => {
  const { pane, env } = await setup();
  const [pa, pb] = [await freePort(), await freePort()];
  const fleetHubs = `[fleet]\nhubs = ["ws://127.0.0.1:${pa}", "ws://127.0.0.1:${pb}"]\n`;
  const a = await hub('a', pa, hubToml(TOKEN, fleetHubs));
  await hub('b', pb, hubToml(TOKEN, fleetHubs));
  // Given only the first hub.
  const c = collector(`ws://127.0.0.1:${pa}`, env);
  await until(() => publishing(pa, pane, 'idle'), 'the collector publishing on the hub it was given', 20_000, c.out);
  await waitFor(() => c.out().includes(`will fail over to ws://127.0.0.1:${pb}/v1/collect`), 'the learned hub in the log', 5000);

  const killedAt = Date.now();
  await a.kill();
  await until(() => publishing(pb, pane, 'idle'), 'the collector on the hub it learned', 5000, c.out);
  expect(Date.now() - killedAt).toBeLessThan(5000);

  // The first hub comes back; the collector does not go back to it (Netdata's parents neither).
  await hub('a', pa, hubToml(TOKEN, fleetHubs));
  await new Promise((r) => setTimeout(r, 3000));
  expect(hostOf(await fleet(pa))?.reachable).toBe(false);
  expect(await publishing(pb, pane, 'idle')).toBe(true);
});

it('passes over a hub that refuses it (wrong token, host busy) with a line saying why', async () => {
  const { pane, env } = await setup();
  const [pa, pb, pc] = [await freePort(), await freePort(), await freePort()];
  await hub('a', pa, hubToml('tok-some-other-token-0000'));
  await hub('b', pb, hubToml(TOKEN));
  await hub('c', pc, hubToml(TOKEN));

  // Another link holds the host on the second hub and keeps heartbeating.
  const holder = new WebSocket(`ws://127.0.0.1:${pb}/v1/collect`, { headers: { authorization: `Bearer ${TOKEN}` } });
  cleanups.push(() => holder.terminate());
  await new Promise<void>((ok, fail) => holder.once('open', () => ok()).once('error', fail));
  holder.send(JSON.stringify({ type: 'hello', protocol: 1, host: HOST, collector_version: 'holder', epoch: '00112233445566778899', actions_allowed: [] }));
  const beat = setInterval(() => holder.send(JSON.stringify({ type: 'heartbeat', at: Date.now() })), 500);
  cleanups.push(() => clearInterval(beat));
  await until(
    async () => hostOf(await fleet(pb))?.reachable === true,
    'the holder linked on the second hub',
    5000,
    () => '',
  );

  const c = collector(`ws://127.0.0.1:${pa},ws://127.0.0.1:${pb},ws://127.0.0.1:${pc}`, env);
  await until(() => publishing(pc, pane, 'idle'), 'the collector publishing on the third hub', 20_000, c.out);
  const log = c.out();
  expect(log).toMatch(
    new RegExp(
      `hub ws://127\\.0\\.0\\.1:${pa}/v1/collect refused this collector \\(refused by the hub \\(HTTP 401: unknown token\\)\\); trying ws://127\\.0\\.0\\.1:${pb}/`,
    ),
  );
  expect(log).toMatch(new RegExp(`hub ws://127\\.0\\.0\\.1:${pb}/v1/collect refused this collector \\(.*\\); trying ws://127\\.0\\.0\\.1:${pc}/`));
  expect(log).toMatch(/hub error host-busy/);
  // Moving on from a refusal is not the minutes-long wait of a lone hub's refusal.
  expect(log).not.toMatch(/quietly until the reason changes/);
});
