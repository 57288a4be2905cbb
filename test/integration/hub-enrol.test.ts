// One line on a new host: `tma hub add-host NAME` on the hub prints a curl line pinned to the
// hub's own certificate; pasted on a "new host" (a second HOME with no tma, no token, no CA, no
// systemd user session) it fetches the collector this hub serves, checks its digest, redeems the
// one-time code for the host's token (written 0600) and prints the collector command, which puts
// the host's agent on the hub within seconds. Hostile cases: the line run again (replay), eight
// redemptions racing for one code, an expired code, a wrong pin: none gets a token, nothing is
// left written on the host.

import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { FleetDocument } from '../../shared/fleet.js';
import { killChildren, launchLogged } from '../support/children.js';
import { freePort } from '../support/ports.js';
import { REPO, ScratchTmux, tma, waitFor } from '../support/scratch-tmux.js';
import { when } from '../support/when.js';

const SCREENS = join(REPO, 'test/integration/screens');
const dir = mkdtempSync(join(tmpdir(), 'tma-enrol-'));
const env = { XDG_CONFIG_HOME: join(dir, 'cfg'), XDG_STATE_HOME: join(dir, 'state') };
const children: ChildProcess[] = [];
let scratch: ScratchTmux | null = null;
let port = 0;
let hubOut: () => string = () => '';

beforeAll(async () => {
  // The hub serves the single file it was built with (no executables: this host has node).
  execFileSync(process.execPath, [join(REPO, 'tools/bundle-single.mjs')], { cwd: REPO, stdio: 'pipe', timeout: 120_000 });
  expect((await tma(['hub', 'tls', '--name', 'localhost,127.0.0.1'], { env })).code).toBe(0);
  port = await freePort();
  const hub = launch(process.execPath, [join(REPO, 'bin/tma.js'), 'hub', '--no-local', '--listen', `127.0.0.1:${port}`], env);
  hubOut = () => hub.out();
  await waitFor(() => hub.out().includes('fleet view:'), `the hub: ${hub.out().slice(-500)}`, 30_000);
}, 150_000);

afterAll(async () => {
  await killChildren(children);
  scratch?.kill();
  rmSync(dir, { recursive: true, force: true });
});

const launch = (cmd: string, args: string[], env: NodeJS.ProcessEnv) => launchLogged(children, cmd, args, env);

/** A machine that has never seen tma: its own HOME, node on PATH, no systemd user session. */
function newHost(name: string): NodeJS.ProcessEnv {
  const home = join(dir, `home-${name}`);
  mkdirSync(home, { recursive: true });
  return { PATH: `${dirname(process.execPath)}:/usr/bin:/bin`, HOME: home, XDG_RUNTIME_DIR: join(home, 'run'), LANG: 'C' };
}

async function addHost(name: string, ttl = '10m'): Promise<string> {
  const r = await tma(['hub', 'add-host', name, '--ttl', ttl], { env });
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  const line = /^curl .+ \| sh$/m.exec(r.stdout)?.[0];
  expect(line).toMatch(
    new RegExp(`^curl -sS --fail-with-body -k --pinnedpubkey 'sha256//[A-Za-z0-9+/=]{44}' https://127\\.0\\.0\\.1:${port}/v1/enrol/[0-9a-f]{32} \\| sh$`),
  );
  return line!;
}

const paste = (line: string, hostEnv: NodeJS.ProcessEnv) => spawnSync('sh', ['-c', line], { env: hostEnv, encoding: 'utf8', timeout: 60_000 });

it('one pasted line enrols a new host: collector, token 0600, and its agent on the hub within seconds', { timeout: 90_000 }, async () => {
  const line = await addHost('build9');
  const host = newHost('build9');
  const t0 = Date.now();
  const run = paste(line, host);
  expect(run.stderr).toBe('');
  expect(run.status).toBe(0);
  const token = join(host.HOME!, '.config', 'tma', 'tokens', 'hub-build9');
  expect(readFileSync(token, 'utf8').trim()).toBe(readFileSync(join(dir, 'cfg', 'tma', 'tokens', 'build9'), 'utf8').trim());
  expect(statSync(token).mode & 0o777).toBe(0o600);
  expect(run.stdout).toContain('tma: host build9 enrolled; no systemd user session here, so start the collector yourself:');
  const command = run.stdout.trim().split('\n').pop()!;
  expect(command).toMatch(
    new RegExp(
      `^\\S+/node ${host.HOME}/\\.local/share/tma/tma\\.cjs collector --hub wss://127\\.0\\.0\\.1:${port} --hub-fingerprint [0-9A-F:]{95} --token-file ${token} --host-name build9$`,
    ),
  );

  scratch = new ScratchTmux('enrol');
  const pane = scratch.start();
  await scratch.standIn(pane, 'claude', join(SCREENS, 'claude-idle-marked.txt'));
  const [cmd, ...args] = command.split(' ');
  const collector = launch(cmd!, [...args, '--socket-name', scratch.name, '--interval', '1'], host);
  const local = readFileSync(join(dir, 'cfg', 'tma', 'hub.token'), 'utf8').trim();
  const ca = join(dir, 'cfg', 'tma', 'tls', 'hub.crt');
  const rows = await when(
    "build9's agent on the hub",
    () => {
      const r = spawnSync('curl', ['-fsS', '--cacert', ca, '-H', `Authorization: Bearer ${local}`, `https://127.0.0.1:${port}/v1/agents`], {
        encoding: 'utf8',
      });
      const agents = r.status === 0 ? (JSON.parse(r.stdout) as FleetDocument).agents.filter((a) => a.host === 'build9') : [];
      return agents.length ? agents.map((a) => [a.host, a.pane, a.agent]) : undefined;
    },
    20_000,
    200,
  ).catch((e: unknown) => {
    throw new Error(`${(e as Error).message}\ncollector: ${collector.out().slice(-800)}\nhub: ${hubOut().slice(-800)}`);
  });
  expect(rows).toEqual([['build9', pane, 'claude']]);
  console.log(`hub-enrol: pasted line to build9's row on the hub in ${Date.now() - t0} ms`);

  // Replay: the same line again gets nothing, and says why.
  const again = paste(line, newHost('build9-replay'));
  expect(again.status).not.toBe(0);
  expect(again.stderr).toContain('no such enrolment code, or it was used already');
  expect(existsSync(join(dir, 'home-build9-replay', '.config', 'tma', 'tokens', 'hub-build9'))).toBe(false);
});

it('with a systemd user session the line installs and starts a user unit running the collector', { timeout: 60_000 }, async () => {
  const line = await addHost('unit1');
  const host = newHost('unit1');
  // A stand-in systemctl (this machine has no user session): it logs its arguments, as the unit's
  // manager would receive them, and answers show-environment as a live session does.
  const fake = join(host.HOME!, 'fakebin');
  mkdirSync(fake, { recursive: true });
  const calls = join(host.HOME!, 'systemctl.log');
  writeFileSync(join(fake, 'systemctl'), `#!/bin/sh\necho "$*" >> ${calls}\n`, { mode: 0o755 });
  const run = paste(line, { ...host, PATH: `${fake}:${host.PATH}` });
  expect(run.stderr).toBe('');
  expect(run.status).toBe(0);
  expect(run.stdout).toContain('tma: host unit1 enrolled; its collector runs as the systemd user unit tma-collector');
  expect(readFileSync(calls, 'utf8').split('\n').filter(Boolean)).toEqual([
    '--user show-environment',
    '--user daemon-reload',
    '--user enable --now tma-collector.service',
  ]);
  const unit = readFileSync(join(host.HOME!, '.config', 'systemd', 'user', 'tma-collector.service'), 'utf8');
  const token = join(host.HOME!, '.config', 'tma', 'tokens', 'hub-unit1');
  expect(unit).toMatch(
    new RegExp(
      `^\\[Unit\\]\nDescription=tma collector \\(host unit1\\)\n[^]*\\[Service\\]\nExecStart=\\S+/node ${host.HOME}/\\.local/share/tma/tma\\.cjs collector --hub wss://127\\.0\\.0\\.1:${port} --hub-fingerprint [0-9A-F:]{95} --token-file ${token} --host-name unit1\nRestart=always\n[^]*WantedBy=default\\.target\n$`,
    ),
  );
});

it('eight redemptions racing for one code: exactly one gets the token', { timeout: 60_000 }, async () => {
  const line = await addHost('race1');
  const url = /(https:\S+)/.exec(line)![1]!;
  const pin = /'(sha256\/\/[^']+)'/.exec(line)![1]!;
  const answers = await Promise.all(
    Array.from(
      { length: 8 },
      () =>
        new Promise<{ code: number | null; out: string }>((resolve) => {
          const c = spawn('curl', ['-sS', '-k', '--pinnedpubkey', pin, '-o', '-', '-w', '\n%{http_code}', '-X', 'POST', url]);
          let out = '';
          c.stdout.on('data', (d) => (out += d));
          c.on('close', (code) => resolve({ code, out }));
        }),
    ),
  );
  const statuses = answers.map((a) => a.out.trim().split('\n').pop());
  expect(statuses.filter((s) => s === '200')).toHaveLength(1);
  expect(statuses.filter((s) => s === '410')).toHaveLength(7);
  const token = readFileSync(join(dir, 'cfg', 'tma', 'tokens', 'race1'), 'utf8').trim();
  expect(answers.filter((a) => a.out.includes(token))).toHaveLength(1);
});

it('an expired code and a wrong pin get nothing', { timeout: 60_000 }, async () => {
  const expiring = await addHost('late1', '1s');
  await new Promise((r) => setTimeout(r, 1_500)); // the code's own expiry: nothing to poll for
  const late = paste(expiring, newHost('late1'));
  expect(late.status).not.toBe(0);
  expect(late.stderr).toContain('this enrolment code expired');

  const line = await addHost('pin1');
  const wrong = line.replace(/sha256\/\/[A-Za-z0-9+/=]{44}/, `sha256//${Buffer.alloc(32, 7).toString('base64')}`);
  const host = newHost('pin1');
  // curl refuses before any byte reaches sh (the pipeline's status is sh's, of an empty script).
  const refused = paste(wrong, host);
  expect(refused.stderr).toMatch(/public key does not match pinned public key/i);
  expect(existsSync(join(host.HOME!, '.config', 'tma'))).toBe(false);
  // The code was never redeemed: the right line still works once.
  expect(paste(line, newHost('pin1-right')).status).toBe(0);
});
