// Two real hub processes on one real nats-server with the same hub.toml, whose one `[[ssh]]` entry
// points at a real sshd on loopback: exactly one hub dials it (the remote command leaves a line per
// start and its pid, so every `collector --stdio` the hubs ever started is counted), the other
// serves the host from NATS, and after `kill -9` of the dialling hub the other dials once the dead
// hub's claim has lapsed.

import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FleetDocument, HostStatus } from '../../shared/fleet.js';
import { TOKENS } from '../support/hub-harness.js';
import { startHubProcess, type HubProcess } from '../support/hub-process.js';
import { startNats, testFleetKeyFile, type NatsNode } from '../support/nats-server.js';
import { freePort } from '../support/ports.js';
import { REPO, ScratchTmux } from '../support/scratch-tmux.js';
import { startSshd, type Sshd } from '../support/sshd.js';
import { sleep, when } from '../support/when.js';

const SCREEN = join(REPO, 'test/integration/screens/claude-idle-marked.txt');
const LEASE_SECS = 2;

async function build1(url: string): Promise<{ host: HostStatus; fresh: boolean } | undefined> {
  const r = await fetch(`${url}/v1/agents`, { headers: { authorization: `Bearer ${TOKENS.operator}` }, signal: AbortSignal.timeout(3000) }).catch(() => null);
  if (!r?.ok) return undefined;
  const d = (await r.json()) as FleetDocument;
  const host = d.hosts.find((h) => h.host === 'build1');
  return host && { host, fresh: !host.stale && host.reachable && d.agents.some((a) => a.host === 'build1' && !a.stale) };
}
const freshOn = (url: string) => async () => ((await build1(url))?.fresh ? true : undefined);

function alive(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('collector');
  } catch {
    return false;
  }
}

describe('two hubs sharing one [[ssh]] entry on NATS', { timeout: 180_000 }, () => {
  let nats: NatsNode;
  let sshd: Sshd;
  let scratch: ScratchTmux;
  let dir: string;
  let a: HubProcess;
  let b: HubProcess;
  let toml: string;

  /** Every `collector --stdio` started so far, and those still running. */
  const starts = (): number[] =>
    existsSync(join(dir, 'collector.pid'))
      ? readFileSync(join(dir, 'collector.pid'), 'utf8')
          .split('\n')
          .filter((p) => /^\d+$/.test(p))
          .map(Number)
      : [];
  const running = () => starts().filter(alive);

  beforeAll(async () => {
    nats = await startNats();
    sshd = await startSshd();
    scratch = new ScratchTmux('nssh');
    await scratch.standIn(scratch.start(), 'claude', SCREEN);
    dir = mkdtempSync(join(tmpdir(), 'tma-nats-ssh-'));
    for (const d of ['a', 'b']) mkdirSync(join(dir, d));
    writeFileSync(join(dir, 'known_hosts'), `${sshd.knownHostsLine}\n`);
    const wrapper = join(dir, 'remote-collector.sh');
    const tmuxTmp = process.env.TMUX_TMPDIR ? `export TMUX_TMPDIR='${process.env.TMUX_TMPDIR}'\n` : '';
    writeFileSync(
      wrapper,
      `#!/bin/sh\necho $$ >> '${join(dir, 'collector.pid')}'\n` +
        `export TMUX= XDG_RUNTIME_DIR='${dir}/run' XDG_CONFIG_HOME='${dir}/cfg' XDG_STATE_HOME='${dir}/state'\n${tmuxTmp}` +
        `exec '${process.execPath}' '${join(REPO, 'bin/tma.js')}' collector --stdio --socket-name '${scratch.name}' --host-name build1\n`,
    );
    chmodSync(wrapper, 0o755);
    toml = `
[[client]]
name = "olga"
token = "${TOKENS.operator}"
role = "operator"
[[ssh]]
name = "build1"
host = "127.0.0.1"
port = ${sshd.port}
user = "${sshd.user}"
identity = "${sshd.clientKey}"
known_hosts = "${join(dir, 'known_hosts')}"
command = "${wrapper}"
[nats]
url = "${nats.url}"
fleet_key_file = "${testFleetKeyFile()}"
lease_secs = ${LEASE_SECS}
`;
  });

  afterAll(async () => {
    await a?.kill();
    await b?.kill();
    // A collector whose ssh session outlived its hub (a failed test) ends here too.
    if (dir) for (const pid of running()) process.kill(pid, 'SIGKILL');
    sshd?.stop();
    scratch?.kill();
    nats?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('one hub dials the host and the other serves it from NATS: one collector ever starts', async () => {
    a = await startHubProcess(join(dir, 'a'), await freePort(), toml);
    await when('build1 fresh on a', freshOn(a.url));
    b = await startHubProcess(join(dir, 'b'), await freePort(), toml);
    await when('build1 fresh on b', freshOn(b.url));
    // Long enough for several redials of a hub that dialled regardless (its backoff starts at 0.5 s).
    await sleep(6000);
    expect(starts()).toHaveLength(1);
    expect(running()).toHaveLength(1);
    expect((await build1(b.url))?.fresh).toBe(true);
    expect(b.output()).toContain('ssh dial held back');
  });

  it('kill -9 of the dialling hub: the other dials once the claim has lapsed, and one collector runs again', async () => {
    const first = starts()[0]!;
    const killedAt = Date.now();
    await a.kill();
    const dialled = await when('b to start a collector', async () => (starts().length > 1 ? Date.now() - killedAt : undefined), 20_000, 50);
    // Heard from after the kill: through b's own link, not the dead hub's last status.
    const fresh = await when(
      'build1 fresh on b through its own link',
      async () => {
        const s = await build1(b.url);
        return s?.fresh && (s.host.last_seen_ms ?? 0) > killedAt ? Date.now() - killedAt : undefined;
      },
      20_000,
    );
    await when("the dead hub's collector to end", async () => (alive(first) ? undefined : true), 10_000);
    console.log(
      `[nats-hubs-ssh] after kill -9 of the dialling hub (lease ${LEASE_SECS} s): b started a collector at ${dialled} ms, fresh through b at ${fresh} ms`,
    );
    expect(dialled).toBeLessThan(LEASE_SECS * 1000 + 3000);
    expect(fresh).toBeLessThan(LEASE_SECS * 1000 + 6000);
    expect(starts()).toHaveLength(2);
    expect(running()).toHaveLength(1);
  });

  it('two hubs started together settle on one link: one collector runs and no more start', async () => {
    await b.kill();
    await when('every collector to end', async () => (running().length === 0 ? true : undefined), 10_000);
    // Both dial at once with nobody holding the host; the claim lets one keep its link.
    [a, b] = await Promise.all([startHubProcess(join(dir, 'a'), await freePort(), toml), startHubProcess(join(dir, 'b'), await freePort(), toml)]);
    await when('build1 fresh on a and b', async () => ((await build1(a.url))?.fresh && (await build1(b.url))?.fresh ? true : undefined));
    await sleep(2000);
    const settled = starts().length;
    // Long enough for several redials of a hub that kept dialling (its backoff starts at 0.5 s).
    await sleep(6000);
    console.log(`[nats-hubs-ssh] hubs started together: ${settled - 2} collector(s) started before one hub held the host`);
    expect(starts()).toHaveLength(settled);
    expect(running()).toHaveLength(1);
  });
});
