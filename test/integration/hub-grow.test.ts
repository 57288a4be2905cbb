// A zero-config `tma hub` grows into a fleet without a restart: `tma hub token --host build2`
// writes hub.toml (keeping the zero-config token), makes the running hub reload it through the pid
// file, and prints the collector command; that command, run on another tmux server, publishes
// build2's rows to the same hub while the page link printed at start keeps working.

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { loadHubConfig } from '../../hub/config/config.js';
import type { FleetDocument } from '../../shared/fleet.js';
import { killChildren } from '../support/children.js';
import { freePort } from '../support/ports.js';
import { REPO, ScratchTmux, tma, waitFor } from '../support/scratch-tmux.js';

const SCREENS = join(REPO, 'test/integration/screens');

let dir = '';
let scratch: ScratchTmux | null = null;
const children: ChildProcess[] = [];

afterEach(async () => {
  await killChildren(children);
  scratch?.kill();
  scratch = null;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = '';
});

function launch(args: string[], env: NodeJS.ProcessEnv): { child: ChildProcess; out(): string } {
  const child = spawn(process.execPath, [join(REPO, 'bin/tma.js'), ...args], {
    env: { ...process.env, TMUX: '', TMUX_PANE: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  return { child, out: () => out };
}

async function zeroConfigHub(env: NodeJS.ProcessEnv, port: number) {
  const hub = launch(['hub', '--no-local', '--listen', `127.0.0.1:${port}`], { ...env, TMA_LOG_LEVEL: 'info' });
  await waitFor(() => /fleet view: \S+/.test(hub.out()), `the hub's page link: ${hub.out().slice(-500)}`, 30_000);
  const link = /fleet view: (\S+)/.exec(hub.out())![1]!;
  return { ...hub, link, token: /#token=([0-9a-f]+)$/.exec(link)?.[1] ?? null };
}

const agents = (port: number, token: string) => fetch(`http://127.0.0.1:${port}/v1/agents`, { headers: { authorization: `Bearer ${token}` } });

const stopped = (c: ChildProcess) => new Promise<void>((r) => (c.exitCode !== null ? r() : c.once('exit', () => r())));

it('tma hub token --host: the entry lands in hub.toml, the running hub takes it, the printed command links', { timeout: 90_000 }, async () => {
  dir = mkdtempSync(join(tmpdir(), 'tma-hub-grow-'));
  const env = { XDG_CONFIG_HOME: join(dir, 'cfg'), XDG_STATE_HOME: join(dir, 'state') };
  const port = await freePort();
  const hub = await zeroConfigHub(env, port);
  expect(hub.link).toBe(`http://127.0.0.1:${port}/#token=${hub.token}`);
  expect((await agents(port, hub.token!)).status).toBe(200);
  const pidFile = join(dir, 'cfg', 'tma', 'hub.pid');
  expect(readFileSync(pidFile, 'utf8')).toBe(`${hub.child.pid}\nhttp://127.0.0.1:${port}\n`);

  const t0 = Date.now();
  const minted = await tma(['hub', 'token', '--host', 'build2'], { env });
  expect(minted.stderr).toBe('');
  expect(minted.code).toBe(0);
  const hubToml = join(dir, 'cfg', 'tma', 'hub.toml');
  const tokenFile = join(dir, 'cfg', 'tma', 'tokens', 'build2');
  expect(minted.stdout).toContain(`# added to ${hubToml}; the running hub (pid ${hub.child.pid}) was told to reload it`);
  // The file holds the zero-config token as an operator, and the new host, as the hub reads it.
  const cfg = loadHubConfig(hubToml);
  expect(cfg.clients).toEqual([{ name: 'local', token: hub.token, role: 'operator' }]);
  expect(cfg.collectors).toEqual([{ host: 'build2', token: readFileSync(tokenFile, 'utf8').trim() }]);
  await waitFor(() => hub.out().includes('reload: +1 host token'), `the reload line: ${hub.out().slice(-800)}`, 10_000);

  // The printed command, as printed, on another tmux server (named, so no one else's is polled).
  const command = /^#\s+(tma collector .+)$/m.exec(minted.stdout)?.[1];
  expect(command).toBe(`tma collector --hub ws://127.0.0.1:${port} --token-file ${tokenFile} --host-name build2`);
  scratch = new ScratchTmux('grow');
  const pane = scratch.start();
  await scratch.standIn(pane, 'claude', join(SCREENS, 'claude-idle-marked.txt'));
  launch([...command!.split(' ').slice(1), '--socket-name', scratch.name, '--interval', '1'], {
    XDG_RUNTIME_DIR: join(dir, 'run-build2'),
    XDG_CONFIG_HOME: join(dir, 'cfg-build2'),
    XDG_STATE_HOME: join(dir, 'st-build2'),
  });
  let rows: FleetDocument['agents'] = [];
  const deadline = t0 + 10_000;
  while (Date.now() < deadline) {
    rows = ((await (await agents(port, hub.token!)).json()) as FleetDocument).agents.filter((r) => r.host === 'build2');
    if (rows.length) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const took = Date.now() - t0;
  expect(rows.map((r) => [r.host, r.pane, r.agent])).toEqual([['build2', pane, 'claude']]);
  expect(took).toBeLessThan(10_000);
  console.log(`hub-grow: token minted to build2's row at /v1/agents in ${took} ms`);
  // No restart: the same process, and the link it printed at start still opens the fleet.
  expect(hub.child.exitCode).toBeNull();
  expect(hub.out().match(/listening on/g)).toHaveLength(1);
  expect((await agents(port, hub.token!)).status).toBe(200);

  // A client the same way: valid at once, no restart.
  const viewer = await tma(['hub', 'token', '--client', 'phone', '--role', 'viewer'], { env });
  expect(viewer.code).toBe(0);
  const phone = readFileSync(join(dir, 'cfg', 'tma', 'tokens', 'phone'), 'utf8').trim();
  await waitFor(() => hub.out().includes('reload: +1 client'), 'the client reload', 10_000);
  expect((await agents(port, phone)).status).toBe(200);

  // A restart reads hub.toml and prints the same page link again.
  hub.child.kill('SIGTERM');
  await stopped(hub.child);
  expect(existsSync(pidFile)).toBe(false);
  const again = await zeroConfigHub(env, port);
  expect(again.link).toBe(hub.link);
  expect((await agents(port, again.token!)).status).toBe(200);
});

it('--print only prints; a hub.toml that does not load is left as it was, and no token is minted', { timeout: 60_000 }, async () => {
  dir = mkdtempSync(join(tmpdir(), 'tma-hub-grow-'));
  const env = { XDG_CONFIG_HOME: join(dir, 'cfg'), XDG_STATE_HOME: join(dir, 'state') };
  const printed = await tma(['hub', 'token', '--print', '--host', 'b3'], { env });
  expect(printed.code).toBe(0);
  expect(printed.stdout).toContain('# add this entry to hub.toml, then reload the hub');
  expect(existsSync(join(dir, 'cfg', 'tma', 'hub.toml'))).toBe(false);

  const hubToml = join(dir, 'cfg', 'tma', 'hub.toml');
  const broken = '[[client]]\nname = "x"\ntoken = "t-1"\nrole = "boss"\n';
  writeFileSync(hubToml, broken);
  const refused = await tma(['hub', 'token', '--host', 'b4'], { env });
  expect(refused.code).toBe(2);
  expect(refused.stderr.trim()).toMatch(new RegExp(`^tma: not adding to ${hubToml}: ${hubToml}: client\\[0\\]\\.role: `));
  expect(readFileSync(hubToml, 'utf8')).toBe(broken);
  expect(existsSync(join(dir, 'cfg', 'tma', 'tokens', 'b4'))).toBe(false);

  // A name already listed is not added twice.
  writeFileSync(hubToml, '[[collector]]\nhost = "b5"\ntoken = "t-5"\n');
  const twice = await tma(['hub', 'token', '--host', 'b5'], { env });
  expect(twice.code).toBe(2);
  expect(twice.stderr).toContain(`host b5 is already in ${hubToml}`);
});

it('with public_url: the page link printed at start and the collector command both use it', { timeout: 60_000 }, async () => {
  dir = mkdtempSync(join(tmpdir(), 'tma-hub-grow-'));
  const env = { XDG_CONFIG_HOME: join(dir, 'cfg'), XDG_STATE_HOME: join(dir, 'state') };
  const port = await freePort();
  const tma_ = join(dir, 'cfg', 'tma');
  mkdirSync(tma_, { recursive: true });
  writeFileSync(join(tma_, 'hub.token'), 'tok-grow-local-51a7\n', { mode: 0o600 });
  writeFileSync(join(tma_, 'hub.toml'), `public_url = "https://fleet.example/tma/"\n[[client]]\nname = "local"\ntoken_file = "hub.token"\nrole = "operator"\n`);
  const hub = await zeroConfigHub(env, port);
  expect(hub.link).toBe('https://fleet.example/tma/#token=tok-grow-local-51a7');
  const minted = await tma(['hub', 'token', '--host', 'b6'], { env });
  expect(minted.code).toBe(0);
  expect(minted.stdout).toContain(`tma collector --hub wss://fleet.example/tma --token-file ${join(tma_, 'tokens', 'b6')} --host-name b6`);
  await waitFor(() => hub.out().includes('reload: +1 host token'), `the reload line: ${hub.out().slice(-800)}`, 10_000);
});
