// Remote act end to end: a person runs `tma --hub … act approve --host … --pane …`, the hub routes
// it to a real `tma collector` on a scratch tmux server, and a stand-in claude that logs every byte
// it receives shows exactly which keys arrived. The slot is what keeps retries, a dropped link,
// a restarted collector and a restarted hub from ever firing twice.

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stdioLink } from '../../collector/fleet/stdio-link.js';
import type { FleetDocument, FleetRow } from '../../shared/fleet.js';
import type { FrameLink } from '../../shared/link.js';
import { TOKENS, startTestHub, testConfig, type TestHub } from '../support/hub-harness.js';
import { REPO, ScratchTmux, tma, waitFor, type CliResult, type StandIn } from '../support/scratch-tmux.js';
import { SCREENS } from '../support/screens.js';
import { startSshd, writeRemoteCollector, type Sshd } from '../support/sshd.js';

const HUB_HB_MS = 500;
const BLOCKED_TITLE = 'Clear the build cache';
const IDLE_TITLE = 'Add a dry-run flag';

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tma-fleet-act-'));
  for (const d of ['state', 'run', 'cfg/tma/actions']) mkdirSync(join(dir, d), { recursive: true });
  writeFileSync(join(dir, 'operator'), `${TOKENS.operator}\n`);
  writeFileSync(join(dir, 'viewer'), `${TOKENS.viewer}\n`);
  writeFileSync(join(dir, 'build1'), `${TOKENS.build1}\n`);
  // An exec action this host has (and a person could fire locally) but does not open to a hub.
  writeFileSync(
    join(dir, 'cfg/tma/actions/shout.toml'),
    `min_engine_version = "0.4.0"\nname = "shout"\nlabel = "Shout"\nkind = "exec"\ncommand = "touch '${join(dir, 'shouted')}'"\n`,
  );
  return dir;
}

function collectorEnv(dir: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    TMUX: '',
    TMUX_PANE: '',
    XDG_STATE_HOME: join(dir, 'state'),
    XDG_RUNTIME_DIR: join(dir, 'run'),
    XDG_CONFIG_HOME: join(dir, 'cfg'),
    TMA_COLLECTOR_HEARTBEAT_MS: '200',
  };
}

async function fleet(hub: TestHub): Promise<FleetDocument> {
  return (await (await hub.get('/v1/agents')).json()) as FleetDocument;
}

/** Poll the hub until a row matching `cond` shows; returns it. */
async function rowWhen(hub: TestHub, cond: (r: FleetRow) => boolean, what: string, timeoutMs = 12_000): Promise<FleetRow> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const hit = (await fleet(hub).catch(() => null))?.agents.find(cond);
    if (hit) return hit;
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}; rows: ${JSON.stringify((await fleet(hub)).agents.map((r) => [r.host, r.pane, r.state, r.stale]))}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** What the stand-in received once anything a broker sent has had time to arrive. */
async function settledKeys(a: StandIn): Promise<string> {
  await new Promise((r) => setTimeout(r, 200));
  return a.keys();
}

const parse = (r: CliResult): Record<string, unknown> => {
  try {
    return JSON.parse(r.stdout) as Record<string, unknown>;
  } catch {
    throw new Error(`not JSON: ${JSON.stringify(r.stdout)}; exit ${r.code}; stderr: ${r.stderr}`);
  }
};

const post = (hub: TestHub, body: unknown, token: string | null = TOKENS.operator) =>
  fetch(`${hub.url}/v1/act`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token === null ? {} : { authorization: `Bearer ${token}` }) },
    body: JSON.stringify(body),
  });

describe('over a WebSocket collector', () => {
  let scratch: ScratchTmux;
  let other: ScratchTmux;
  let hub: TestHub;
  let collector: ChildProcess;
  let collectorLog = '';
  /** The collector's log messages: its stderr is JSON lines (pino), one record each. */
  const collectorMessages = () =>
    collectorLog
      .split('\n')
      .filter(Boolean)
      .map((l) => {
        try {
          return String((JSON.parse(l) as { msg?: unknown }).msg ?? l);
        } catch {
          return l;
        }
      });
  let dir: string;
  let agent: StandIn;
  let otherAgent: StandIn;
  let server: string;

  const act = (args: string[], token = 'operator') =>
    tma(['--hub', hub.url, '--token-file', join(dir, token), 'act', ...args], { env: { XDG_CONFIG_HOME: join(dir, 'cli-cfg') } });

  beforeAll(async () => {
    dir = tempDir();
    scratch = new ScratchTmux('fact');
    agent = await scratch.standIn(scratch.start(), 'claude', SCREENS.claudeBlocked);
    // A second server whose first pane has the same id: pane ids are only unique per server.
    other = new ScratchTmux('fact2');
    otherAgent = await other.standIn(other.start(), 'claude', SCREENS.claudeIdle);
    expect(agent.pane).toBe('%0');
    hub = await startTestHub({ heartbeatMs: HUB_HB_MS, actTimeoutMs: 5000 });
    collector = spawn(
      process.execPath,
      [
        join(REPO, 'bin/tma.js'),
        'collector',
        '--hub',
        `ws://127.0.0.1:${hub.port}`,
        '--token-file',
        join(dir, 'build1'),
        '--socket-name',
        scratch.name,
        '--socket-name',
        other.name,
        '--interval',
        '0.3',
        '--host-name',
        'build1',
      ],
      { env: collectorEnv(dir), stdio: ['ignore', 'ignore', 'pipe'] },
    );
    collector.stderr!.on('data', (d) => (collectorLog += d));
    const row = await rowWhen(hub, (r) => r.server === scratch.socketPath() && r.state === 'blocked' && !r.stale, 'the blocked stand-in on the hub');
    server = row.server;
    await rowWhen(hub, (r) => r.server === other.socketPath() && !r.stale, 'the second server on the hub');
  });

  afterAll(async () => {
    collector?.kill('SIGKILL');
    await hub?.close();
    scratch?.kill();
    other?.kill();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a viewer (403) and a missing or unknown token (401) without touching the pane', async () => {
    const body = { host: 'build1', server, pane: agent.pane, action: 'approve' };
    expect((await post(hub, body, TOKENS.viewer)).status).toBe(403);
    expect((await post(hub, body, null)).status).toBe(401);
    expect((await post(hub, body, 'no-such-token')).status).toBe(401);
    const viaCli = await act(['approve', '--host', 'build1', '--server', server, '--pane', agent.pane], 'viewer');
    expect(viaCli.code).toBe(1);
    expect(viaCli.stderr).toMatch(/403/);
    expect(await settledKeys(agent)).toBe('');
  });

  it('names the candidate servers when a pane id is on two of them, and fires nothing', async () => {
    const cli = await act(['approve', '--host', 'build1', '--pane', '%0', '--json']);
    expect(cli.code).toBe(1);
    expect(cli.stderr).toContain(scratch.socketPath());
    expect(cli.stderr).toContain(other.socketPath());
    const res = await post(hub, { host: 'build1', pane: '%0', action: 'approve' });
    expect(res.status).toBe(409);
    const body = (await res.json()) as { candidates: { server: string }[] };
    expect(body.candidates.map((c) => c.server).sort()).toEqual([scratch.socketPath(), other.socketPath()].sort());
    expect(await settledKeys(agent)).toBe('');
  });

  it('approves a blocked claude on another host: one "1", outcome sent, and the same slot again replays', async () => {
    const args = ['approve', '--host', 'build1', '--server', server, '--pane', agent.pane, '--slot', 'ws-slot-1', '--json'];
    const first = await act(args);
    expect(parse(first)).toEqual({
      schema: 1,
      action: 'approve',
      pane: agent.pane,
      outcome: 'sent',
      exit_code: 0,
      reason: null,
      cached: false,
      host: 'build1',
      server,
    });
    expect(first.code).toBe(0);
    await waitFor(() => agent.keys() !== '', 'keys at the stand-in');
    expect(await settledKeys(agent)).toBe('1');

    const again = await act(args);
    expect(parse(again)).toMatchObject({ outcome: 'sent', exit_code: 0, cached: true, host: 'build1', server });
    expect(again.code).toBe(0);
    expect(await settledKeys(agent)).toBe('1');

    // Both ends wrote an audit line naming who, where and what; neither names the title.
    const hubAudit = hub.logLines.filter((l) => l.includes('"audit":"remote-act"') && l.includes('ws-slot-1'));
    expect(hubAudit).toHaveLength(2);
    expect(JSON.parse(hubAudit[0]!)).toMatchObject({
      who: 'olga',
      host: 'build1',
      server,
      pane: agent.pane,
      action: 'approve',
      outcome: 'sent',
      cached: false,
    });
    expect(JSON.parse(hubAudit[0]!).expect_episode_ms).toEqual(expect.any(Number));
    await waitFor(() => collectorMessages().filter((l) => /remote act .*ws-slot-1/.test(l)).length === 2, 'two collector audit lines');
    const line = collectorMessages().find((l) => l.includes('ws-slot-1'))!;
    expect(JSON.parse(line.slice(line.indexOf('{')))).toMatchObject({
      who: 'olga',
      host: 'build1',
      server,
      pane: agent.pane,
      action: 'approve',
      outcome: 'sent',
    });
    for (const text of [...hub.logLines, collectorLog]) {
      expect(text).not.toContain(BLOCKED_TITLE);
      expect(text).not.toContain(IDLE_TITLE);
    }
  });

  it('refuses an exec action the host does not open to a hub, without running it', async () => {
    const r = await act(['shout', '--host', 'build1', '--server', server, '--pane', agent.pane, '--json']);
    expect(parse(r)).toMatchObject({ outcome: 'refused', reason: 'not-allowed', exit_code: 4, host: 'build1' });
    expect(r.code).toBe(4);
    // The host never announced it, so the hub answered alone.
    const sent = collectorMessages().filter((l) => /remote act .*"action":"shout"/.test(l));
    expect(sent).toHaveLength(0);
    expect(existsSync(join(dir, 'shouted'))).toBe(false);
  });

  it('after the stand-in went idle: refused, no key — by the gate, and by the episode the caller saw', async () => {
    const seen = await rowWhen(hub, (r) => r.server === server && r.pane === agent.pane, 'the row before the change');
    await agent.paint(SCREENS.claudeIdle);
    await rowWhen(hub, (r) => r.server === server && r.pane === agent.pane && r.state === 'idle', 'the idle row on the hub');
    const gated = await act(['approve', '--host', 'build1', '--server', server, '--pane', agent.pane, '--json']);
    expect(parse(gated)).toMatchObject({ outcome: 'refused', reason: 'gated', exit_code: 4, cached: false });
    expect(gated.code).toBe(4);
    const stale = await act([
      'approve',
      '--host',
      'build1',
      '--server',
      server,
      '--pane',
      agent.pane,
      '--expect-episode-ms',
      String(seen.episode_ms),
      '--json',
    ]);
    expect(parse(stale)).toMatchObject({ outcome: 'refused', reason: 'episode-changed', exit_code: 4 });
    expect(await settledKeys(agent)).toBe('1');
  });

  it('--all fans out over every matching row under the results envelope, worst exit wins', async () => {
    const r = await act(['deny', '--all', '--host', 'build1', '--json']);
    const doc = parse(r) as { schema: number; results: Record<string, unknown>[] };
    expect(doc.schema).toBe(1);
    expect(doc.results.map((x) => [x.server, x.pane, x.outcome, x.reason, x.exit_code, x.host]).sort()).toEqual(
      [
        [server, agent.pane, 'refused', 'gated', 4, 'build1'],
        [other.socketPath(), otherAgent.pane, 'refused', 'gated', 4, 'build1'],
      ].sort(),
    );
    expect(doc.results[0]).not.toHaveProperty('schema');
    expect(r.code).toBe(4);
    expect(await settledKeys(agent)).toBe('1');
    expect(otherAgent.keys()).toBe('');
    const none = await act(['deny', '--all', '--host', 'build1', '--state', 'blocked']);
    expect(none.code).toBe(2);
  });

  it('a hub restart forgets nothing that matters: the slot still replays, no second key', async () => {
    const port = hub.port;
    await hub.close();
    hub = await startTestHub({ heartbeatMs: HUB_HB_MS, listen: { host: '127.0.0.1', port }, config: testConfig() });
    await rowWhen(hub, (r) => r.server === server && r.pane === agent.pane && !r.stale, 'the collector back on the new hub', 20_000);
    const r = await act(['approve', '--host', 'build1', '--server', server, '--pane', agent.pane, '--slot', 'ws-slot-1', '--json']);
    expect(parse(r)).toMatchObject({ outcome: 'sent', exit_code: 0, cached: true });
    expect(await settledKeys(agent)).toBe('1');
  });
});

describe('when the link drops mid-act', () => {
  let scratch: ScratchTmux;
  let hub: TestHub;
  let dir: string;
  let agent: StandIn;
  const children: ChildProcess[] = [];

  /** A `tma collector --stdio` attached to the hub as host laptop; `cut` drops its first act result and the link. */
  function attachCollector(opts: { cutOnResult: boolean }): { link: FrameLink; child: ChildProcess; log: () => string } {
    let log = '';
    const child = spawn(
      process.execPath,
      [join(REPO, 'bin/tma.js'), 'collector', '--stdio', '--socket-name', scratch.name, '--interval', '0.3', '--host-name', 'laptop'],
      { env: collectorEnv(dir), stdio: ['pipe', 'pipe', 'pipe'] },
    );
    children.push(child);
    child.stderr.on('data', (d) => (log += d));
    const inner = stdioLink(child.stdout, child.stdin);
    const link: FrameLink = {
      send: (t) => inner.send(t),
      onMessage: (cb) =>
        inner.onMessage((t) => {
          if (opts.cutOnResult && t.includes('"type":"act_result"')) {
            // The keys went out on the host; the answer is lost with the link.
            link.close('cut by the test');
            return;
          }
          cb(t);
        }),
      onClose: (cb) => inner.onClose(cb),
      close: (reason) => {
        inner.close(reason);
        child.stdin.end();
      },
    };
    hub.attachLink(link, { transport: 'ssh', host: 'laptop' });
    return { link, child, log: () => log };
  }

  const act = (args: string[]) =>
    tma(['--hub', hub.url, '--token-file', join(dir, 'operator'), 'act', ...args], { env: { XDG_CONFIG_HOME: join(dir, 'cli-cfg') } });

  beforeAll(async () => {
    dir = tempDir();
    scratch = new ScratchTmux('fdrop');
    agent = await scratch.standIn(scratch.start(), 'claude', SCREENS.claudeBlocked);
    hub = await startTestHub({ heartbeatMs: HUB_HB_MS, actTimeoutMs: 5000 });
  });

  afterAll(async () => {
    for (const c of children) c.kill('SIGKILL');
    await hub?.close();
    scratch?.kill();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('ends with fired-unknown (exit 124), refuses to deliver while down, and the retry replays without a second key', async () => {
    const first = attachCollector({ cutOnResult: true });
    await rowWhen(hub, (r) => r.host === 'laptop' && r.pane === agent.pane && r.state === 'blocked' && !r.stale, 'the blocked row from laptop');
    const args = ['approve', '--host', 'laptop', '--pane', agent.pane, '--slot', 'drop-slot-1', '--json'];

    const cut = await act(args);
    expect(parse(cut)).toMatchObject({ outcome: 'timeout', reason: 'fired-unknown', exit_code: 124, host: 'laptop' });
    expect(cut.code).toBe(124);
    expect(cut.stderr).toContain('--slot drop-slot-1');
    await waitFor(() => agent.keys() !== '', 'the key that landed before the cut');
    expect(await settledKeys(agent)).toBe('1');
    await waitFor(() => first.child.exitCode !== null, 'the cut collector to exit');

    // While no link is up the row is stale and the hub says so at once, without waiting.
    await rowWhen(hub, (r) => r.host === 'laptop' && r.pane === agent.pane && r.stale, 'the stale row');
    const t0 = Date.now();
    const down = await act(args);
    expect(parse(down)).toMatchObject({ outcome: 'timeout', reason: 'undelivered', exit_code: 124 });
    expect(Date.now() - t0).toBeLessThan(4000);

    // A new collector process (same receipts) comes back; the same slot replays the recorded fire.
    attachCollector({ cutOnResult: false });
    await rowWhen(hub, (r) => r.host === 'laptop' && r.pane === agent.pane && !r.stale, 'laptop back');
    const retry = await act(args);
    expect(parse(retry)).toMatchObject({ outcome: 'sent', exit_code: 0, cached: true, host: 'laptop' });
    expect(retry.code).toBe(0);
    expect(await settledKeys(agent)).toBe('1');
  });
});

describe('over the ssh transport', () => {
  let sshd: Sshd;
  let scratch: ScratchTmux;
  let hub: TestHub;
  let dir: string;
  let agent: StandIn;

  beforeAll(async () => {
    sshd = await startSshd();
    dir = tempDir();
    scratch = new ScratchTmux('fssh');
    agent = await scratch.standIn(scratch.start(), 'claude', SCREENS.claudeBlocked);
    const knownHosts = join(dir, 'known_hosts');
    writeFileSync(knownHosts, `${sshd.knownHostsLine}\n`);
    // What the hub runs on the far side: the collector, with this test's private state dirs.
    const wrapper = writeRemoteCollector(dir, scratch.name, 200);
    hub = await startTestHub({
      heartbeatMs: HUB_HB_MS,
      actTimeoutMs: 5000,
      config: testConfig({
        collectors: [],
        ssh: [{ name: 'build1', host: '127.0.0.1', port: sshd.port, user: sshd.user, identity: sshd.clientKey, known_hosts: knownHosts, command: wrapper }],
      }),
      ssh: { backoff: { baseMs: 50, capMs: 300 }, readyTimeoutMs: 5000 },
    });
  });

  afterAll(async () => {
    await hub?.close();
    sshd?.stop();
    scratch?.kill();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('approves a prompt on a host the hub reaches over ssh: one "1", and the slot replays', async () => {
    await rowWhen(hub, (r) => r.host === 'build1' && r.pane === agent.pane && r.state === 'blocked' && !r.stale, 'the blocked row over ssh', 20_000);
    const args = [
      '--hub',
      hub.url,
      '--token-file',
      join(dir, 'operator'),
      'act',
      'approve',
      '--host',
      'build1',
      '--pane',
      agent.pane,
      '--slot',
      'ssh-1',
      '--json',
    ];
    const env = { XDG_CONFIG_HOME: join(dir, 'cli-cfg') };
    const first = await tma(args, { env });
    expect(parse(first), first.stderr + hub.logLines.slice(-8).join('')).toMatchObject({
      outcome: 'sent',
      exit_code: 0,
      cached: false,
      host: 'build1',
      server: scratch.socketPath(),
    });
    await waitFor(() => agent.keys() !== '', 'keys at the stand-in');
    const again = await tma(args, { env });
    expect(parse(again)).toMatchObject({ outcome: 'sent', cached: true });
    expect(await settledKeys(agent)).toBe('1');
  });
});
