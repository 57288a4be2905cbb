// SIGHUP re-reads hub.toml in a real `tma hub --config` process, with real WebSocket collectors, a
// real ssh target (sshd on loopback) and tokens minted by `tma hub token`. What the new file
// changes takes effect at once; what it leaves alone keeps its very connection; a broken file
// changes nothing and says why. Before reload existed, the first SIGHUP ended the hub.

import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import WebSocket from 'ws';
import { parseHubConfig } from '../../hub/config/config.js';
import type { FleetDocument, HostStatus } from '../../shared/fleet.js';
import { freePort } from '../support/ports.js';
import { REPO, tma, waitFor } from '../support/scratch-tmux.js';
import { startSshd, writeRemoteCollector, type Sshd } from '../support/sshd.js';

const VIEWER = 'tok-reload-viewer-5e1d';
let sshd: Sshd;
let dir = '';
const cleanups: (() => void | Promise<void>)[] = [];

beforeAll(async () => {
  sshd = await startSshd();
});
afterAll(() => sshd?.stop());

afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) {
    try {
      await c();
    } catch {
      // keep tearing down the rest
    }
  }
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = '';
});

interface Proc {
  child: ChildProcess;
  out: () => string;
}

function launch(args: string[], env: NodeJS.ProcessEnv): Proc {
  const child = spawn(process.execPath, [join(REPO, 'bin/tma.js'), ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
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

async function startHubProcess(args: string[], port: number): Promise<Proc> {
  const hub = launch(['hub', '--no-local', ...args], {
    XDG_STATE_HOME: join(dir, 'hub-state'),
    XDG_CONFIG_HOME: join(dir, 'hub-cfg'),
    TMA_LOG_LEVEL: 'info',
  });
  await waitFor(() => hub.out().includes('listening on'), `the hub up: ${hub.out().slice(-500)}`, 30_000);
  const res = await fetch(`http://127.0.0.1:${port}/healthz`);
  expect(res.status).toBe(200);
  return hub;
}

function collector(port: number, host: string, tokenFile: string): Proc {
  return launch(
    ['collector', '--hub', `ws://127.0.0.1:${port}`, '--token-file', tokenFile, '--host-name', host, '--socket-name', `tma-reload-none-${process.pid}`],
    { TMUX: '', TMUX_PANE: '', XDG_RUNTIME_DIR: join(dir, `run-${host}`), XDG_CONFIG_HOME: join(dir, `cfg-${host}`), XDG_STATE_HOME: join(dir, `st-${host}`) },
  );
}

const get = (port: number, token: string) => fetch(`http://127.0.0.1:${port}/v1/agents`, { headers: { authorization: `Bearer ${token}` } });

/** Poll until `cond` holds on the hosts of the fleet document read with `token`. */
async function hostsUntil(port: number, token: string, cond: (h: HostStatus[]) => boolean, what: string, log: () => string): Promise<HostStatus[]> {
  let last: HostStatus[] = [];
  const end = Date.now() + 30_000;
  for (;;) {
    const res = await get(port, token).catch(() => null);
    if (res?.status === 200) last = ((await res.json()) as FleetDocument).hosts;
    if (cond(last)) return last;
    if (Date.now() > end) throw new Error(`${what}: last hosts ${JSON.stringify(last)}; hub log tail: ${log().slice(-1500)}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

const up = (hs: HostStatus[], host: string) => hs.some((h) => h.host === host && h.reachable);
/** Hub log lines saying a collector for `host` connected: one per link. */
const connects = (log: string, host: string) => log.split('\n').filter((l) => l.includes('collector connected') && l.includes(`"host":"${host}"`)).length;

/** Remote collectors still running for this test's ssh target. */
function remoteCollectors(socketName: string): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const cmd = readFileSync(`/proc/${d}/cmdline`, 'utf8');
      if (cmd.includes('--stdio') && cmd.includes(socketName)) out.push(Number(d));
    } catch {
      // ended meanwhile
    }
  }
  return out;
}

it('SIGHUP applies hub.toml changes without touching the links they leave alone; a broken file keeps the old config', { timeout: 120_000 }, async () => {
  dir = mkdtempSync(join(tmpdir(), 'tma-hub-reload-'));
  const tokens = join(dir, 'tokens');
  const port = await freePort();
  const tokA = join(dir, 'hostA.token');
  const tokB = join(dir, 'hostB.token');
  const vic = join(dir, 'vic.token');
  writeFileSync(tokA, 'tok-reload-hostA-0b1c\n', { mode: 0o600 });
  writeFileSync(tokB, 'tok-reload-hostB-77aa\n');
  chmodSync(tokB, 0o644);
  writeFileSync(vic, `${VIEWER}\n`, { mode: 0o600 });
  const hubToml = join(dir, 'hub.toml');
  const head = `listen = "127.0.0.1:${port}"\n`;
  const hostB = `[[collector]]\nhost = "hostB"\ntoken_file = "${tokB}"\n`;
  writeFileSync(
    hubToml,
    `${head}[[collector]]\nhost = "hostA"\ntoken_file = "${tokA}"\n${hostB}[[client]]\nname = "vic"\ntoken_file = "${vic}"\nrole = "viewer"\n`,
  );

  const hub = await startHubProcess(['--config', hubToml], port);
  // hostB's token file is world-readable: said once, with the fix, and still accepted.
  expect(hub.out()).toContain(`token file ${tokB} is readable by other users (mode 0644); fix: chmod 600 ${tokB}`);

  const a = collector(port, 'hostA', tokA);
  const b = collector(port, 'hostB', tokB);
  await hostsUntil(port, VIEWER, (hs) => up(hs, 'hostA') && up(hs, 'hostB'), 'both WebSocket hosts up', hub.out);
  // The collector says the same about its --token-file, and connects all the same.
  expect(b.out()).toContain(`fix: chmod 600 ${tokB}`);
  expect(a.out()).not.toContain('chmod 600');
  const sub = new WebSocket(`ws://127.0.0.1:${port}/v1/subscribe`, { headers: { authorization: `Bearer ${VIEWER}` } });
  cleanups.push(() => sub.terminate());
  const subClosed = new Promise<{ code: number; reason: string }>((r) => sub.on('close', (code, reason) => r({ code, reason: reason.toString() })));
  await new Promise<void>((r, j) => {
    sub.once('message', () => r());
    sub.once('error', j);
  });
  // The same client's Server-Sent Events stream, read to its end.
  const sse = await fetch(`http://127.0.0.1:${port}/v1/subscribe`, { headers: { authorization: `Bearer ${VIEWER}`, accept: 'text/event-stream' } });
  expect(sse.status).toBe(200);
  const sseEnded = (async () => {
    const reader = sse.body!.getReader();
    while (!(await reader.read()).done);
    return true;
  })().catch(() => true);

  // Tokens minted by the CLI: 0600 files, and output that is hub.toml as it stands. --print: this
  // test edits hub.toml by hand (without it, `hub token` adds to the default hub.toml itself).
  const mintedClient = await tma(['hub', 'token', '--print', '--client', 'ops', '--role', 'operator', '--dir', tokens]);
  expect(mintedClient.code).toBe(0);
  const mintedHost = await tma(['hub', 'token', '--print', '--host', 'hostC', '--dir', tokens, '--hub', `ws://127.0.0.1:${port}`]);
  expect(mintedHost.code).toBe(0);
  for (const name of ['ops', 'hostC']) expect(statSync(join(tokens, name)).mode & 0o777).toBe(0o600);
  const again = await tma(['hub', 'token', '--print', '--host', 'hostC', '--dir', tokens]);
  expect(again.code).toBe(2);
  expect(again.stderr.trim().split('\n')).toEqual([`tma: ${join(tokens, 'hostC')} already exists; pass --force to replace its token`]);
  const minted = parseHubConfig(hubToml, mintedClient.stdout + mintedHost.stdout);
  expect(minted.clients).toEqual([{ name: 'ops', role: 'operator', token: readFileSync(join(tokens, 'ops'), 'utf8').trim() }]);
  expect(minted.collectors.map((c) => c.host)).toEqual(['hostC']);
  expect(mintedHost.stdout).toContain(`tma collector --hub ws://127.0.0.1:${port} --token-file ${join(tokens, 'hostC')} --host-name hostC`);
  const ops = minted.clients[0]!.token;
  expect((await get(port, ops)).status).toBe(401);

  // An ssh target to add: the test's sshd, running this repository's collector.
  const knownHosts = join(dir, 'known_hosts');
  writeFileSync(knownHosts, `${sshd.knownHostsLine}\n`);
  const remoteSocket = `tma-reload-ssh-${process.pid}`;
  const wrapper = writeRemoteCollector(dir, remoteSocket, 1000);
  const ssh =
    `[[ssh]]\nname = "gpu2"\nhost = "127.0.0.1"\nport = ${sshd.port}\nuser = "${sshd.user}"\nidentity = "${sshd.clientKey}"\n` +
    `known_hosts = "${knownHosts}"\ncommand = "${wrapper}"\n`;

  // ---- reload 1: +ops +hostC +gpu2, -hostA -vic ----------------------------------------------------
  const bConnects = connects(hub.out(), 'hostB');
  expect(bConnects).toBe(1);
  const v2 = `${head}${hostB}${mintedClient.stdout}${mintedHost.stdout}${ssh}`;
  writeFileSync(hubToml, v2);
  hub.child.kill('SIGHUP');
  await waitFor(
    () => hub.out().includes('reload: +1 client, -1 client, +1 host token, -1 host token, ssh: +gpu2'),
    `the reload line: ${hub.out().slice(-1500)}`,
    15_000,
  );
  expect(hub.child.exitCode).toBeNull();
  expect((await get(port, ops)).status).toBe(200);
  expect((await get(port, VIEWER)).status).toBe(401);
  // The removed client's open stream is ended, saying why.
  const closed = await subClosed;
  expect(closed.code).toBe(1008);
  expect(closed.reason).toMatch(/client vic was removed/);
  expect(await sseEnded).toBe(true);
  // hostA's link is cut with the reason, and its reconnect is refused.
  await waitFor(() => /token for host hostA was removed by a reload/.test(a.out()), `hostA told why: ${a.out()}`, 15_000);
  await waitFor(() => /hub refused this collector \(refused by the hub \(HTTP 401/.test(a.out()), `hostA refused: ${a.out()}`, 20_000);
  // The minted host token works for a collector that uses the printed command's file.
  const c = collector(port, 'hostC', join(tokens, 'hostC'));
  const hs = await hostsUntil(port, ops, (h) => up(h, 'hostC') && up(h, 'gpu2'), 'hostC and gpu2 up', hub.out);
  expect(hs.find((h) => h.host === 'gpu2')).toMatchObject({ transport: 'ssh', reachable: true });
  expect(hs.find((h) => h.host === 'hostA')).toMatchObject({ reachable: false });
  expect(hs.find((h) => h.host === 'hostA')!.reason).toMatch(/removed by a reload/);
  expect(up(hs, 'hostB')).toBe(true);
  expect(remoteCollectors(remoteSocket)).toHaveLength(1);

  // ---- reload 2: a broken file changes nothing -----------------------------------------------------
  writeFileSync(hubToml, `${v2}oops = [\n`);
  hub.child.kill('SIGHUP');
  await waitFor(
    () => /reload failed, keeping the running config: .*hub\.toml: not valid TOML.*\(line \d+\)/.test(hub.out()),
    `the failure line: ${hub.out().slice(-1500)}`,
    15_000,
  );
  expect(hub.child.exitCode).toBeNull();
  expect((await get(port, ops)).status).toBe(200);
  writeFileSync(hubToml, `${v2}[[client]]\nname = "x"\ntoken = "tok-x-1"\nrole = "boss"\n`);
  hub.child.kill('SIGHUP');
  await waitFor(
    () => /reload failed, keeping the running config: .*hub\.toml: client\[1\]\.role/.test(hub.out()),
    `the schema failure line: ${hub.out().slice(-1500)}`,
    15_000,
  );
  expect((await get(port, 'tok-x-1')).status).toBe(401);

  // ---- reload 3: a changed [[ssh]] entry is redialled: a new remote collector, the old one ended ----
  const [firstRemote] = remoteCollectors(remoteSocket);
  const sshChanged = ssh.replace(`command = "${wrapper}"`, `command = "/bin/sh ${wrapper}"`);
  writeFileSync(hubToml, `${head}${hostB}${mintedClient.stdout}${mintedHost.stdout}${sshChanged}`);
  hub.child.kill('SIGHUP');
  await waitFor(() => hub.out().includes('reload: ssh: ~gpu2'), `the ssh change line: ${hub.out().slice(-1500)}`, 15_000);
  await waitFor(
    () => {
      const now = remoteCollectors(remoteSocket);
      return now.length === 1 && now[0] !== firstRemote;
    },
    'one remote collector, a new one',
    20_000,
  );
  await hostsUntil(port, ops, (h) => up(h, 'gpu2'), 'gpu2 up again', hub.out);

  // ---- reload 4: hostC's token rotated (--force), -gpu2 ends its link and the remote collector --------
  const hostCFile = join(tokens, 'hostC');
  const oldC = readFileSync(hostCFile, 'utf8');
  chmodSync(hostCFile, 0o644);
  const rotated = await tma(['hub', 'token', '--print', '--host', 'hostC', '--dir', tokens, '--force']);
  expect(rotated.code).toBe(0);
  expect(readFileSync(hostCFile, 'utf8')).not.toBe(oldC);
  expect(statSync(hostCFile).mode & 0o777).toBe(0o600);
  const cOut = () => c.out();
  writeFileSync(hubToml, `${head}${hostB}${mintedClient.stdout}${mintedHost.stdout}`);
  hub.child.kill('SIGHUP');
  await waitFor(() => hub.out().includes('reload: ~1 host token, ssh: -gpu2'), `the ssh removal line: ${hub.out().slice(-1500)}`, 15_000);
  // hostC's collector still holds the old token: cut with the reason, then refused.
  await waitFor(() => /token for host hostC was changed by a reload/.test(cOut()), `hostC told why: ${cOut()}`, 15_000);
  await waitFor(() => /HTTP 401/.test(cOut()), `hostC refused: ${cOut()}`, 20_000);
  const after = await hostsUntil(port, ops, (h) => h.some((x) => x.host === 'gpu2' && !x.reachable), 'gpu2 down', hub.out);
  expect(after.find((h) => h.host === 'gpu2')!.reason).toMatch(/ssh entry gpu2 was removed/);
  await waitFor(() => remoteCollectors(remoteSocket).length === 0, 'the remote collector ended', 15_000);

  // hostB was never disturbed: still up over its first and only link.
  expect(up(after, 'hostB')).toBe(true);
  expect(up(after, 'hostC')).toBe(false);
  expect(connects(hub.out(), 'hostB')).toBe(1);
  expect(hub.out()).not.toMatch(/"host":"hostB"[^\n]*collector link down/);

  hub.child.kill('SIGTERM');
  await new Promise<void>((r) => (hub.child.exitCode !== null ? r() : hub.child.once('exit', () => r())));
  expect(hub.child.exitCode).toBe(0);
});

it('a zero-config hub says there is nothing to reload and keeps running', { timeout: 60_000 }, async () => {
  dir = mkdtempSync(join(tmpdir(), 'tma-hub-reload0-'));
  const port = await freePort();
  const hub = await startHubProcess(['--listen', `127.0.0.1:${port}`], port);
  hub.child.kill('SIGHUP');
  await waitFor(() => hub.out().includes('nothing to reload'), `the note: ${hub.out().slice(-800)}`, 10_000);
  expect(hub.child.exitCode).toBeNull();
  expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
});
