// The hub's ssh transport against a real sshd on loopback: the hub dials in, checks the host key,
// runs the collector through a wrapper script (which leaves a marker when it starts, so a refused
// connection can be shown to have run nothing) and publishes the scratch server's agents.

import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import type { SshTarget } from '../../hub/config/config.js';
import type { FleetDocument, HostStatus } from '../../shared/fleet.js';
import { HB_MS, startTestHub, testConfig, type TestHub } from '../support/hub-harness.js';
import { REPO, ScratchTmux, waitFor } from '../support/scratch-tmux.js';
import { makeKey, startSshd, type Sshd } from '../support/sshd.js';

const SCREEN = join(REPO, 'test/integration/screens/claude-idle-marked.txt');
const TITLE_MARK = 'TITLE-MARK-q7v3';

let sshd: Sshd;
let scratch: ScratchTmux | null = null;
let hub: TestHub | null = null;
let dir = '';

beforeAll(async () => {
  sshd = await startSshd();
});

afterAll(() => sshd?.stop());

afterEach(async () => {
  await hub?.close();
  hub = null;
  // Every collector the wrapper started, in case a failed test left one without its ssh session.
  const pids = dir && existsSync(join(dir, 'collector.pid')) ? readFileSync(join(dir, 'collector.pid'), 'utf8').split('\n') : [];
  for (const pid of pids.filter((p) => /^\d+$/.test(p))) {
    try {
      process.kill(Number(pid), 'SIGKILL');
    } catch {
      // Already ended with its session.
    }
  }
  scratch?.kill();
  scratch = null;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = '';
});

interface Setup {
  pane: string;
  marker: string;
  pidFile: string;
  knownHosts: string;
  target: SshTarget;
}

/** A scratch server with one stand-in, and the wrapper the hub runs over ssh to publish it. */
async function setup(knownHostsText: string): Promise<Setup> {
  scratch = new ScratchTmux('hssh');
  const pane = scratch.start();
  await scratch.standIn(pane, 'claude', SCREEN);
  dir = mkdtempSync(join(tmpdir(), 'tma-hub-ssh-'));
  const marker = join(dir, 'collector-started');
  const pidFile = join(dir, 'collector.pid');
  const knownHosts = join(dir, 'known_hosts');
  writeFileSync(knownHosts, knownHostsText);
  const wrapper = join(dir, 'remote-collector.sh');
  const tmuxTmp = process.env.TMUX_TMPDIR ? `export TMUX_TMPDIR='${process.env.TMUX_TMPDIR}'\n` : '';
  writeFileSync(
    wrapper,
    `#!/bin/sh\necho started >> '${marker}'\necho $$ >> '${pidFile}'\n` +
      `export TMUX= XDG_RUNTIME_DIR='${dir}/run' XDG_CONFIG_HOME='${dir}/cfg' XDG_STATE_HOME='${dir}/state'\n` +
      // The test hub beats every HB_MS and calls a link dead after three silent intervals; the
      // collector must beat as often, or each link is cut and redialled every 600 ms.
      `export TMA_COLLECTOR_HEARTBEAT_MS=${HB_MS}\n${tmuxTmp}` +
      `exec '${process.execPath}' '${join(REPO, 'bin/tma.js')}' collector --stdio --socket-name '${scratch.name}' --host-name build1\n`,
  );
  chmodSync(wrapper, 0o755);
  const target: SshTarget = {
    name: 'build1',
    host: '127.0.0.1',
    port: sshd.port,
    user: sshd.user,
    identity: sshd.clientKey,
    known_hosts: knownHosts,
    command: wrapper,
  };
  return { pane, marker, pidFile, knownHosts, target };
}

async function startHubFor(target: SshTarget): Promise<TestHub> {
  hub = await startTestHub({
    config: testConfig({ collectors: [], ssh: [target] }),
    ssh: { backoff: { baseMs: 50, capMs: 300 }, readyTimeoutMs: 5000 },
  });
  return hub;
}

async function fleet(h: TestHub): Promise<FleetDocument> {
  return (await (await h.get('/v1/agents')).json()) as FleetDocument;
}

/** Poll the fleet document until `cond` holds; returns the document that satisfied it. */
async function fleetUntil(h: TestHub, cond: (d: FleetDocument) => boolean, what: string, timeoutMs = 15_000): Promise<FleetDocument> {
  const seen: { doc: FleetDocument | null; busy: boolean } = { doc: null, busy: false };
  const poll = () => {
    if (seen.busy) return;
    seen.busy = true;
    void fleet(h)
      .then((d) => (seen.doc = d))
      // A poll still in flight when a failed test closes the hub must not outlive it as an error.
      .catch(() => undefined)
      .finally(() => (seen.busy = false));
  };
  try {
    await waitFor(
      () => {
        poll();
        return seen.doc !== null && cond(seen.doc);
      },
      what,
      timeoutMs,
    );
  } catch (e) {
    throw new Error(`${(e as Error).message}; last hosts: ${JSON.stringify(seen.doc?.hosts)}; sshd log tail: ${sshd.log().split('\n').slice(-6).join(' | ')}`);
  }
  return seen.doc!;
}

const build1 = (d: FleetDocument): HostStatus | undefined => d.hosts.find((x) => x.host === 'build1');
const downs = (h: TestHub) => h.logLines.filter((l) => l.includes('ssh link down')).length;

it('reaches a scratch tmux server through ssh: its agent appears under the ssh host name, without a title', async () => {
  const s = await setup(`${sshd.knownHostsLine}\n`);
  const h = await startHubFor(s.target);
  const doc = await fleetUntil(h, (d) => d.agents.some((r) => r.pane === s.pane && !r.stale), 'the stand-in row, fresh');
  const row = doc.agents.find((r) => r.pane === s.pane)!;
  expect(row).toMatchObject({ host: 'build1', agent: 'claude', state: 'idle', stale: false });
  expect(row).not.toHaveProperty('title');
  expect(JSON.stringify(doc)).not.toContain(TITLE_MARK);
  expect(build1(doc)).toMatchObject({ transport: 'ssh', reachable: true, stale: false, reason: null });
  expect(readFileSync(s.marker, 'utf8')).toMatch(/^started\n/);
});

it('refuses a changed host key: unreachable with the reason, no rows, the command never ran; a fixed file lets it in', async () => {
  const s = await setup('');
  // Another server's key on file for this address: what a changed host key looks like.
  const other = makeKey(join(dir, 'other_host_key'));
  writeFileSync(s.knownHosts, `[127.0.0.1]:${sshd.port} ${other}\n`);
  const logFrom = sshd.log().length;
  const h = await startHubFor(s.target);
  const doc = await fleetUntil(h, (d) => /host key/.test(build1(d)?.reason ?? ''), 'a host key refusal');
  expect(build1(doc)).toMatchObject({ transport: 'ssh', reachable: false, stale: true });
  expect(build1(doc)!.reason).toMatch(/does not match/);
  expect(build1(doc)!.reason).toContain(`[127.0.0.1]:${sshd.port}`);
  expect(doc.agents).toEqual([]);
  // It keeps redialling (the key may be fixed), and each attempt is refused before anything runs.
  await waitFor(() => downs(h) >= 3, 'three refused attempts');
  expect(existsSync(s.marker)).toBe(false);
  expect(sshd.log().slice(logFrom)).not.toMatch(/Accepted publickey/);
  expect(sshd.log().slice(logFrom)).toMatch(/Connection from 127\.0\.0\.1/);

  // The user corrects known_hosts (hashed, as `ssh-keygen -H` writes it): the next redial gets in.
  writeFileSync(s.knownHosts, `${sshd.knownHostsLine}\n`);
  execFileSync('ssh-keygen', ['-H', '-f', s.knownHosts], { stdio: 'ignore' });
  expect(readFileSync(s.knownHosts, 'utf8')).toMatch(/^\|1\|/);
  await fleetUntil(h, (d) => d.agents.some((r) => r.pane === s.pane && !r.stale) && build1(d)?.reason === null, 'the row after the fix');
  expect(existsSync(s.marker)).toBe(true);
});

it('refuses an unknown host (empty known_hosts) likewise', async () => {
  const s = await setup('');
  const h = await startHubFor(s.target);
  const doc = await fleetUntil(h, (d) => /host key/.test(build1(d)?.reason ?? ''), 'a host key refusal');
  expect(build1(doc)).toMatchObject({ reachable: false });
  expect(build1(doc)!.reason).toMatch(/is not in/);
  expect(doc.agents).toEqual([]);
  await waitFor(() => downs(h) >= 3, 'three refused attempts');
  expect(existsSync(s.marker)).toBe(false);
});

it('refuses a login with a key the server does not accept, and runs nothing', async () => {
  const s = await setup(`${sshd.knownHostsLine}\n`);
  const stranger = join(dir, 'stranger');
  makeKey(stranger);
  const h = await startHubFor({ ...s.target, identity: stranger });
  const doc = await fleetUntil(h, (d) => /login refused/.test(build1(d)?.reason ?? ''), 'a login refusal');
  expect(build1(doc)).toMatchObject({ reachable: false });
  expect(doc.agents).toEqual([]);
  expect(existsSync(s.marker)).toBe(false);
});

it('goes stale with rows kept when sshd drops the connection, and comes back once sshd accepts again', async () => {
  const s = await setup(`${sshd.knownHostsLine}\n`);
  const h = await startHubFor(s.target);
  await fleetUntil(h, (d) => d.agents.some((r) => r.pane === s.pane && !r.stale), 'the stand-in row, fresh');
  const pidsBefore = readFileSync(s.pidFile, 'utf8');

  sshd.kill();
  const down = await fleetUntil(h, (d) => build1(d)?.reachable === false, 'the host down');
  expect(build1(down)!.stale).toBe(true);
  expect(build1(down)!.reason).not.toBeNull();
  expect(down.agents.find((r) => r.pane === s.pane)).toMatchObject({ host: 'build1', stale: true });
  // While sshd is away each redial fails to connect; the rows stay.
  await fleetUntil(h, (d) => /cannot connect/.test(build1(d)?.reason ?? ''), 'a failed redial');
  expect((await fleet(h)).agents.find((r) => r.pane === s.pane)).toMatchObject({ stale: true });

  await sshd.restart();
  const back = await fleetUntil(h, (d) => build1(d)?.reachable === true && d.agents.some((r) => r.pane === s.pane && !r.stale), 'the host back');
  expect(build1(back)).toMatchObject({ reason: null, stale: false });
  // A new collector ran for the new connection.
  expect(readFileSync(s.pidFile, 'utf8').length).toBeGreaterThan(pidsBefore.length);
});

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

it('an entry named unlike the machine publishes under the entry name, starts one collector, and leaves none behind', async () => {
  const s = await setup(`${sshd.knownHostsLine}\n`);
  // The collector says hello as build1 (its own name); the hub.toml entry calls the host gpu1.
  const h = await startHubFor({ ...s.target, name: 'gpu1' });
  const doc = await fleetUntil(h, (d) => d.agents.some((r) => r.pane === s.pane && !r.stale), 'the stand-in row under gpu1');
  expect(doc.agents.find((r) => r.pane === s.pane)).toMatchObject({ host: 'gpu1', stale: false });
  expect(doc.hosts.find((x) => x.host === 'gpu1')).toMatchObject({ transport: 'ssh', reachable: true, reason: null });
  expect(doc.hosts.map((x) => x.host)).not.toContain('build1');
  // Linked once and it stays linked: no redial loop, no pile of collectors on the agent host.
  await new Promise((r) => setTimeout(r, 1500));
  expect(readFileSync(s.marker, 'utf8').trim().split('\n')).toHaveLength(1);
  const pids = readFileSync(s.pidFile, 'utf8')
    .split('\n')
    .filter((p) => /^\d+$/.test(p))
    .map(Number);
  expect(pids.every(alive)).toBe(true);
  // Closing the hub ends the channel, and with it the remote collector.
  await h.close();
  hub = null;
  await waitFor(() => !pids.some(alive), 'the remote collector gone with its channel', 10_000);
});
