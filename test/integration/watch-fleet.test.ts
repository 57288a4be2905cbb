// `tma --hub … watch` over a real hub process and two real collectors (two hosts, each its own
// scratch tmux server with a stand-in agent), in a real terminal: a pane of a third server.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { startHubProcess, type HubProcess } from '../support/hub-process.js';
import { freePort } from '../support/ports.js';
import { REPO, ScratchTmux, type StandIn } from '../support/scratch-tmux.js';
import { tmaLine, tuiPane, type TuiPane } from '../support/tui-pane.js';

const STALE_SECS = 4;

let dir: string;
let hub: HubProcess;
const servers: ScratchTmux[] = [];
const collectors = new Map<string, ChildProcess>();
const logs = new Map<string, string>();

function collector(host: string, s: ScratchTmux): ChildProcess {
  const env = {
    ...process.env,
    TMUX: '',
    TMUX_PANE: '',
    XDG_STATE_HOME: join(dir, `state-${host}`),
    XDG_RUNTIME_DIR: join(dir, `run-${host}`),
    XDG_CONFIG_HOME: join(dir, `cfg-${host}`),
    TMA_COLLECTOR_HEARTBEAT_MS: '1000',
  };
  for (const d of [env.XDG_STATE_HOME, env.XDG_RUNTIME_DIR, env.XDG_CONFIG_HOME]) mkdirSync(d, { recursive: true });
  const args = [join(REPO, 'bin/tma.js'), 'collector', '--hub', hub.url.replace('http', 'ws'), '--token-file', join(dir, host), '--socket-name', s.name];
  const c = spawn(process.execPath, [...args, '--interval', '0.3', '--host-name', host], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  c.stderr.on('data', (d) => logs.set(host, (logs.get(host) ?? '') + String(d)));
  collectors.set(host, c);
  return c;
}

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tma-watch-fleet-'));
  for (const name of ['build1', 'laptop', 'operator']) writeFileSync(join(dir, name), `tok-${name}-${Math.random().toString(36).slice(2)}\n`);
  const toml =
    `stale_after_secs = ${STALE_SECS}\n` +
    ['build1', 'laptop'].map((h) => `[[collector]]\nhost = "${h}"\ntoken_file = "${join(dir, h)}"\n`).join('') +
    `[[client]]\nname = "olga"\ntoken_file = "${join(dir, 'operator')}"\nrole = "operator"\n`;
  hub = await startHubProcess(dir, await freePort(), toml);
});

afterEach(async () => {
  for (const c of collectors.values()) c.kill('SIGKILL');
  collectors.clear();
  await hub?.kill();
  for (const s of servers.splice(0)) s.kill();
  rmSync(dir, { recursive: true, force: true });
});

async function host(name: string, fixture: string): Promise<StandIn> {
  const s = new ScratchTmux(name);
  servers.push(s);
  const a = await s.standIn(s.start(), 'claude', fixture);
  collector(name, s);
  return a;
}

async function watch(): Promise<TuiPane> {
  const viewer = new ScratchTmux('viewer');
  servers.push(viewer);
  viewer.start();
  const t = tuiPane(viewer, 150, 30);
  mkdirSync(join(dir, 'cli-cfg'), { recursive: true });
  t.type(tmaLine({ XDG_CONFIG_HOME: join(dir, 'cli-cfg') }, ['--hub', hub.url, '--token-file', join(dir, 'operator'), 'watch', '--table']));
  t.keys('Enter');
  return t;
}

test('host names on rows; approve on the far host sends one key there; a killed collector shows stale in time', async () => {
  const far = await host('laptop', 'claude-permission-dialog.txt');
  const near = await host('build1', 'claude-working.txt');
  const t = await watch();
  const screen = await t.until((x) => /⚑ blocked .* laptop +main:0\.0/.test(x) && /● working .* build1 +main:0\.0/.test(x), 'both hosts on the watch', 20_000);
  expect(screen).toContain('HOST');
  expect(screen).toContain(`fleet at ${hub.url}`);
  // The cursor holds the row it was on when the other host's rows arrived above it: a person
  // moves up to the blocked row first (k at the top stays there).
  t.keys('k');
  await t.until((x) => /screen of laptop main:0\.0 stays on laptop/.test(x), 'the cursor on the blocked row', 5000);
  t.keys('a');
  await t.until((x) => x.includes('Approve claude on laptop main:0.0') && x.includes('[y/N]'), 'the confirmation naming the far host');
  expect(far.keys()).toBe('');
  t.keys('y');
  await t
    .until((x) => x.includes('[sent]'), 'the outcome on the row', 20_000)
    .catch((e: unknown) => {
      throw new Error(`${(e as Error).message}\ncollector:\n${logs.get('laptop') ?? ''}\nhub:\n${hub.output()}`);
    });
  await new Promise((r) => setTimeout(r, 500));
  expect(far.keys()).toBe('1');
  expect(near.keys()).toBe('');

  collectors.get('build1')!.kill('SIGKILL');
  const killedAt = Date.now();
  await t.until((x) => x.includes('host build1: stale') && /\(stale\) .* build1/.test(x), 'build1 marked stale', 15_000);
  // Within the hub's stale timeout, plus the heartbeat it waits out and one redraw.
  expect(Date.now() - killedAt).toBeLessThan(STALE_SECS * 1000 + 3000);
});

test('act --menu over the hub: the far host judges each action; a choice asks y, then the fleet act sends one key there', async () => {
  const far = await host('laptop', 'claude-permission-dialog.txt');
  const near = await host('build1', 'claude-permission-dialog.txt');
  const token = readFileSync(join(dir, 'operator'), 'utf8').trim();
  // The menu reads the fleet once: wait until the hub holds the far pane blocked.
  const blockedOnHub = async () => {
    const res = await fetch(`${hub.url}/v1/agents`, { headers: { authorization: `Bearer ${token}` } });
    const doc = (await res.json()) as { agents: { host: string; pane: string; state: string }[] };
    return doc.agents.some((r) => r.host === 'laptop' && r.pane === far.pane && r.state === 'blocked');
  };
  for (const end = Date.now() + 20_000; !(await blockedOnHub()); await new Promise((r) => setTimeout(r, 200)))
    if (Date.now() > end) throw new Error(`the far pane never showed blocked on the hub\nhub:\n${hub.output()}`);
  const viewer = new ScratchTmux('viewer');
  servers.push(viewer);
  viewer.start();
  const t = tuiPane(viewer, 150, 30);
  mkdirSync(join(dir, 'cli-cfg'), { recursive: true });
  const args = ['--hub', hub.url, '--token-file', join(dir, 'operator'), 'act', '--menu', '--host', 'laptop', '--pane', far.pane];
  t.type(tmaLine({ XDG_CONFIG_HOME: join(dir, 'cli-cfg') }, args));
  t.keys('Enter');
  const menu = await t.until((x) => x.includes('choose a number'), 'the menu', 20_000);
  expect(menu).toContain(`actions for claude on laptop main:0.0 (${far.pane})`);
  const lines = menu.split('\n');
  const approve = lines.find((l) => /^ +\d+\. Approve \(approve\)$/.test(l));
  expect(approve, menu).toBeDefined();
  // What the host would not fire is listed with the host's own reason.
  expect(menu).toMatch(/\(compact\) — would not fire: \S+/);
  t.type(approve!.trim().split('.')[0]!);
  t.keys('Enter');
  await t.until((x) => x.includes('Approve claude on laptop main:0.0') && x.includes('[y/N]'), 'the confirmation naming the far host');
  expect(far.keys()).toBe('');
  t.keys('y', 'Enter');
  await t
    .until((x) => x.includes(`approve ${far.pane}: sent`), 'the outcome', 20_000)
    .catch((e: unknown) => {
      throw new Error(`${(e as Error).message}\ncollector:\n${logs.get('laptop') ?? ''}\nhub:\n${hub.output()}`);
    });
  await new Promise((r) => setTimeout(r, 500));
  expect(far.keys()).toBe('1');
  expect(near.keys()).toBe('');
});
