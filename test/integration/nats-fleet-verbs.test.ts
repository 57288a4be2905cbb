// Mute and preview through the hub a collector is NOT linked to: two real hub processes on one
// real nats-server, two real collectors linked to hub a (build1 with defaults; laptop with
// `[remote] allow_mute = false`), every request sent to hub b. The mute is read back from the pane
// in tmux, the preview is the host's own reading of the pane, the same through either hub; the
// stand-ins log every byte they receive, so "nothing was typed" is checked. With no hub holding a
// host's link, or with NATS lost, b says the request was not delivered.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FleetDocument, FleetRow } from '../../shared/fleet.js';
import { TOKENS } from '../support/hub-harness.js';
import { startHubProcess, type HubProcess } from '../support/hub-process.js';
import { startNats, testFleetKeyFile, type NatsNode } from '../support/nats-server.js';
import { freePort } from '../support/ports.js';
import { REPO, ScratchTmux, type StandIn } from '../support/scratch-tmux.js';
import { SCREENS } from '../support/screens.js';
import { sleep, when } from '../support/when.js';

const toml = (natsUrl: string) => `
[[collector]]
host = "build1"
token = "${TOKENS.build1}"
[[collector]]
host = "laptop"
token = "${TOKENS.laptop}"
[[client]]
name = "olga"
token = "${TOKENS.operator}"
role = "operator"
[[client]]
name = "vic"
token = "${TOKENS.viewer}"
role = "viewer"
[nats]
url = "${natsUrl}"
fleet_key_file = "${testFleetKeyFile()}"
lease_secs = 2
`;

async function agents(url: string): Promise<FleetDocument | null> {
  const r = await fetch(`${url}/v1/agents`, { headers: { authorization: `Bearer ${TOKENS.operator}` }, signal: AbortSignal.timeout(3000) }).catch(() => null);
  return r?.ok ? ((await r.json()) as FleetDocument) : null;
}

const freshRow = (url: string, host: string) =>
  when<FleetRow>(`a fresh blocked row of ${host} on ${url}`, async () =>
    (await agents(url))?.agents.find((r) => r.host === host && r.state === 'blocked' && !r.stale),
  );

async function post(url: string, path: string, body: unknown, token: string = TOKENS.operator): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(20_000),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('mute and preview through the hub a collector is not linked to', { timeout: 180_000 }, () => {
  let nats: NatsNode;
  let dir: string;
  let build1: ScratchTmux;
  let laptop: ScratchTmux;
  let blocked: StandIn;
  let farBlocked: StandIn;
  let a: HubProcess;
  let b: HubProcess;
  const collectors = new Map<string, ChildProcess>();

  const collector = (host: 'build1' | 'laptop', server: ScratchTmux, config: string, hubUrl: string): void => {
    const home = join(dir, host);
    for (const d of ['cfg/tma', 'state', 'run']) mkdirSync(join(home, d), { recursive: true });
    writeFileSync(join(home, 'cfg/tma/config.toml'), config);
    writeFileSync(join(home, 'token'), `${TOKENS[host]}\n`);
    const c = spawn(
      process.execPath,
      [
        join(REPO, 'bin/tma.js'),
        'collector',
        '--hub',
        hubUrl.replace(/^http/, 'ws'),
        '--token-file',
        join(home, 'token'),
        '--socket-name',
        server.name,
        '--interval',
        '0.3',
        '--host-name',
        host,
      ],
      {
        env: {
          ...process.env,
          TMUX: '',
          TMUX_PANE: '',
          XDG_STATE_HOME: join(home, 'state'),
          XDG_RUNTIME_DIR: join(home, 'run'),
          XDG_CONFIG_HOME: join(home, 'cfg'),
        },
        stdio: ['ignore', 'ignore', 'ignore'],
      },
    );
    collectors.set(host, c);
  };

  beforeAll(async () => {
    nats = await startNats();
    dir = mkdtempSync(join(tmpdir(), 'tma-nats-verbs-'));
    for (const d of ['a', 'b']) mkdirSync(join(dir, d), { recursive: true });
    build1 = new ScratchTmux('nvb');
    blocked = await build1.standIn(build1.start(), 'claude', SCREENS.claudeBlocked);
    laptop = new ScratchTmux('nvl');
    farBlocked = await laptop.standIn(laptop.start(), 'claude', SCREENS.claudeBlocked);
    a = await startHubProcess(join(dir, 'a'), await freePort(), toml(nats.url));
    b = await startHubProcess(join(dir, 'b'), await freePort(), toml(nats.url));
    collector('build1', build1, '[remote]\nallow_actions = ["approve"]\n', a.url);
    collector('laptop', laptop, '[remote]\nallow_mute = false\n', a.url);
    for (const host of ['build1', 'laptop']) await freshRow(b.url, host);
  });

  afterAll(async () => {
    for (const c of collectors.values()) c.kill('SIGKILL');
    await a?.kill();
    await b?.kill();
    build1?.kill();
    laptop?.kill();
    nats?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('a mute through b is written on the pane in tmux, and a clear through b takes it off; nothing is typed', async () => {
    const before = Date.now();
    const m = await post(b.url, '/v1/mute', { host: 'build1', pane: blocked.pane, for_ms: 600_000 });
    expect(m.status).toBe(200);
    expect(m.body).toMatchObject({ schema: 1, outcome: 'muted', exit_code: 0, host: 'build1', pane: blocked.pane, server: build1.socketPath() });
    const until = Number(build1.option(blocked.pane, '@agent_mute_until'));
    expect(until).toBeGreaterThanOrEqual(before + 600_000 - 5000);
    expect(until).toBeLessThanOrEqual(Date.now() + 600_000 + 5000);
    expect(m.body.until_ms).toBe(until);
    const cleared = await post(b.url, '/v1/mute', { host: 'build1', pane: blocked.pane, clear: true });
    expect(cleared.body).toMatchObject({ outcome: 'unmuted', host: 'build1' });
    expect(build1.option(blocked.pane, '@agent_mute_until')).toBe('');
    await sleep(300);
    expect(blocked.keys()).toBe('');
  });

  it('a host with [remote] allow_mute = false refuses a mute through b, and its pane is untouched', async () => {
    const m = await post(b.url, '/v1/mute', { host: 'laptop', pane: farBlocked.pane });
    expect(m.status).toBe(200);
    expect(m.body).toMatchObject({ outcome: 'refused', exit_code: 4, reason: 'not-allowed', host: 'laptop' });
    expect(laptop.option(farBlocked.pane, '@agent_mute_until')).toBe('');
  });

  it('b checks the token as before: a viewer may not mute (403), and may preview', async () => {
    const m = await post(b.url, '/v1/mute', { host: 'build1', pane: blocked.pane }, TOKENS.viewer);
    expect(m.status).toBe(403);
    expect(build1.option(blocked.pane, '@agent_mute_until')).toBe('');
    const p = await post(b.url, '/v1/preview', { host: 'build1', pane: blocked.pane, actions: ['approve'] }, TOKENS.viewer);
    expect(p.status).toBe(200);
  });

  it("a preview through b is the host's reading of the pane, the same as through a; nothing is typed", async () => {
    const body = { host: 'build1', pane: blocked.pane, actions: ['approve'] };
    const viaB = await post(b.url, '/v1/preview', body);
    const viaA = await post(a.url, '/v1/preview', body);
    expect(viaB.status).toBe(200);
    expect(viaB.body).toEqual(viaA.body);
    expect(viaB.body).toMatchObject({
      schema: 1,
      host: 'build1',
      server: build1.socketPath(),
      pane: blocked.pane,
      found: true,
      agent: 'claude',
      state: 'blocked',
    });
    expect(viaB.body.pending_summary).toContain('rm -rf build/.cache');
    expect(viaB.body.actions).toEqual([expect.objectContaining({ name: 'approve', fireable: true, lane: 'keys', keys: ['1'] })]);
    await sleep(300);
    expect(blocked.keys()).toBe('');
  });

  it('once no hub holds the host any more, b says undelivered (mute) and not connected (preview)', async () => {
    const live = await post(b.url, '/v1/preview', { host: 'laptop', pane: farBlocked.pane, actions: ['approve'] });
    expect(live.status).toBe(200);
    collectors.get('laptop')!.kill('SIGKILL');
    await when('laptop down on b', async () => ((await agents(b.url))?.hosts.find((h) => h.host === 'laptop')?.reachable === false ? true : undefined));
    const m = await post(b.url, '/v1/mute', { host: 'laptop', pane: farBlocked.pane });
    expect(m.body).toMatchObject({ outcome: 'timeout', exit_code: 124, reason: 'undelivered', host: 'laptop' });
    const p = await post(b.url, '/v1/preview', { host: 'laptop', pane: farBlocked.pane, actions: ['approve'] });
    expect(p.status).toBe(503);
    expect(String(p.body.error)).toContain('not connected');
  });

  it('once b has lost NATS, it says undelivered at once rather than waiting on a route that is gone', async () => {
    const live = await post(b.url, '/v1/mute', { host: 'build1', pane: blocked.pane, clear: true });
    expect(live.body).toMatchObject({ outcome: 'unmuted', host: 'build1' });
    nats.kill();
    await when('b to notice NATS is gone', async () => ((await fetch(`${b.url}/healthz`).catch(() => null))?.status === 503 ? true : undefined));
    const t0 = Date.now();
    const m = await post(b.url, '/v1/mute', { host: 'build1', pane: blocked.pane });
    expect(m.body).toMatchObject({ outcome: 'timeout', reason: 'undelivered', host: 'build1' });
    const p = await post(b.url, '/v1/preview', { host: 'build1', pane: blocked.pane, actions: ['approve'] });
    expect(p.status).toBe(503);
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(build1.option(blocked.pane, '@agent_mute_until')).toBe('');
  });
});
