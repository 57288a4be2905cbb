// Every verb over a hub, against real collectors: `mute`, `act --dry-run [--json]`, `act --list`,
// `doctor`, readable `subscribe`, and `jump` to a pane on another host through a real sshd on
// loopback. Two hosts: build1 (defaults) and laptop (`[remote] allow_mute = false`,
// `share_prompt = false`), each a collector on its own scratch tmux server with stand-in agents
// that log every byte they receive, so "nothing was sent" is checked, not assumed.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FleetDocument, FleetRow } from '../../shared/fleet.js';
import { TOKENS, startTestHub, type TestHub } from '../support/hub-harness.js';
import { REPO, ScratchTmux, tma, waitFor, type StandIn } from '../support/scratch-tmux.js';
import { SCREENS } from '../support/screens.js';
import { startSshd, type Sshd } from '../support/sshd.js';
import { tmaLine, tuiPane } from '../support/tui-pane.js';

let dir: string;
let hub: TestHub;
let build1: ScratchTmux;
let laptop: ScratchTmux;
let blocked: StandIn;
let idle: StandIn;
let farBlocked: StandIn;
const collectors: ChildProcess[] = [];

function startCollector(host: string, server: ScratchTmux, config: string): ChildProcess {
  const home = join(dir, host);
  mkdirSync(join(home, 'cfg/tma'), { recursive: true });
  mkdirSync(join(home, 'state'), { recursive: true });
  mkdirSync(join(home, 'run'), { recursive: true });
  writeFileSync(join(home, 'cfg/tma/config.toml'), config);
  writeFileSync(join(home, 'token'), `${TOKENS[host as 'build1' | 'laptop']}\n`);
  const c = spawn(
    process.execPath,
    [
      join(REPO, 'bin/tma.js'),
      'collector',
      '--hub',
      `ws://127.0.0.1:${hub.port}`,
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
        TMA_COLLECTOR_HEARTBEAT_MS: '200',
      },
      stdio: ['ignore', 'ignore', 'ignore'],
    },
  );
  collectors.push(c);
  return c;
}

async function rowWhen(cond: (r: FleetRow) => boolean, what: string): Promise<FleetRow> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const doc = (await (await hub.get('/v1/agents')).json()) as FleetDocument;
    const hit = doc.agents.find(cond);
    if (hit) return hit;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(doc.agents.map((r) => [r.host, r.pane, r.state]))}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const cliEnv = (extra: NodeJS.ProcessEnv = {}) => ({ XDG_CONFIG_HOME: join(dir, 'cli-cfg'), ...extra });
const fleet = (args: string[], env: NodeJS.ProcessEnv = {}, token = 'operator') =>
  tma(['--hub', hub.url, '--token-file', join(dir, token), ...args], { env: cliEnv(env), timeoutMs: 20_000 });
const settled = async (a: StandIn) => {
  await new Promise((r) => setTimeout(r, 300));
  return a.keys();
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tma-fleet-verbs-'));
  writeFileSync(join(dir, 'operator'), `${TOKENS.operator}\n`);
  writeFileSync(join(dir, 'viewer'), `${TOKENS.viewer}\n`);
  mkdirSync(join(dir, 'cli-cfg/tma'), { recursive: true });
  build1 = new ScratchTmux('fvb');
  blocked = await build1.standIn(build1.start(), 'claude', SCREENS.claudeBlocked);
  idle = await build1.standIn(build1.newPane(), 'claude', SCREENS.claudeIdle);
  laptop = new ScratchTmux('fvl');
  farBlocked = await laptop.standIn(laptop.start(), 'claude', SCREENS.claudeBlocked);
  hub = await startTestHub({ heartbeatMs: 500, actTimeoutMs: 5000 });
  startCollector('build1', build1, '');
  startCollector('laptop', laptop, '[remote]\nallow_mute = false\nshare_prompt = false\n');
  await rowWhen((r) => r.host === 'build1' && r.pane === blocked.pane && r.state === 'blocked' && !r.stale, 'build1 blocked');
  await rowWhen((r) => r.host === 'build1' && r.pane === idle.pane && r.state === 'idle' && !r.stale, 'build1 idle');
  await rowWhen((r) => r.host === 'laptop' && r.state === 'blocked' && !r.stale, 'laptop blocked');
});

afterAll(async () => {
  for (const c of collectors) c.kill('SIGKILL');
  await hub?.close();
  build1?.kill();
  laptop?.kill();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('mute over a hub', () => {
  it('mutes a pane on its host for the time given, and --clear unmutes it; no key reaches the agent', async () => {
    const before = Date.now();
    const r = await fleet(['mute', '--host', 'build1', '--pane', blocked.pane, '--for', '30m']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`tma: muted for 30m: ${blocked.pane} on build1\n`);
    const until = Number(build1.option(blocked.pane, '@agent_mute_until'));
    expect(until).toBeGreaterThanOrEqual(before + 30 * 60_000);
    expect(until).toBeLessThanOrEqual(Date.now() + 30 * 60_000);
    const cleared = await fleet(['mute', '--host', 'build1', '--pane', blocked.pane, '--clear']);
    expect(cleared.code).toBe(0);
    expect(build1.option(blocked.pane, '@agent_mute_until')).toBe('');
    expect(await settled(blocked)).toBe('');
  });

  it('a host with [remote] allow_mute = false refuses (exit 4) and its pane is untouched', async () => {
    const r = await fleet(['mute', '--host', 'laptop', '--pane', farBlocked.pane]);
    expect(r.code).toBe(4);
    expect(r.stderr).toContain('allow_mute = false');
    expect(laptop.option(farBlocked.pane, '@agent_mute_until')).toBe('');
  });

  it('a viewer token may not mute (exit 1, 403)', async () => {
    const r = await fleet(['mute', '--host', 'build1', '--pane', blocked.pane], {}, 'viewer');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/403/);
    expect(build1.option(blocked.pane, '@agent_mute_until')).toBe('');
  });
});

describe('act --dry-run over a hub', () => {
  it('--json shows what would be answered, judged on the host, and sends nothing', async () => {
    const r = await fleet(['act', 'approve', '--dry-run', '--json', '--host', 'build1', '--pane', blocked.pane]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(Object.keys(doc)).toEqual([
      'schema',
      'action',
      'pane',
      'agent',
      'fireable',
      'reason',
      'effect',
      'prompt_id',
      'pending_summary',
      'host',
      'server',
      'locator',
      'lane',
      'keys',
      'asks',
      'shares_prompt',
    ]);
    expect(doc).toMatchObject({ schema: 1, action: 'approve', pane: blocked.pane, agent: 'claude', fireable: true, reason: null, lane: 'keys', keys: ['1'] });
    expect(doc.effect).toBe('keys: 1');
    expect(doc.host).toBe('build1');
    expect(doc.server).toBe(build1.socketPath());
    expect(typeof doc.asks).toBe('string');
    expect(await settled(blocked)).toBe('');
  });

  it('on an idle pane the host says why it would not fire', async () => {
    const r = await fleet(['act', 'approve', '--dry-run', '--json', '--host', 'build1', '--pane', idle.pane]);
    const doc = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(doc.fireable).toBe(false);
    expect(doc.reason).toBe('gated');
    expect(await settled(idle)).toBe('');
  });

  it('a host that keeps its prompts says so, in text and JSON', async () => {
    const j = JSON.parse((await fleet(['act', 'approve', '--dry-run', '--json', '--host', 'laptop', '--pane', farBlocked.pane])).stdout) as Record<
      string,
      unknown
    >;
    expect(j).toMatchObject({ fireable: true, pending_summary: null, asks: 'not shared by this host', shares_prompt: false });
    const t = await fleet(['act', 'approve', '--dry-run', '--host', 'laptop', '--pane', farBlocked.pane]);
    expect(t.code).toBe(0);
    expect(t.stdout).toContain('host: laptop\n');
    expect(t.stdout).toContain('asks: not shared by this host\n');
    expect(t.stdout).toContain('effect: keys: 1\n');
    expect(t.stdout).toContain('gate: fireable\n');
    expect(t.stdout).toContain('nothing was sent');
    expect(await settled(farBlocked)).toBe('');
  });

  it('a binder the pane no longer shows is refused in the preview too', async () => {
    const r = await fleet(['act', 'approve', '--dry-run', '--json', '--host', 'build1', '--pane', blocked.pane, '--expect-prompt', 'p-0000000000000000']);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(doc.fireable).toBe(false);
    expect(doc.reason).toBe('prompt-changed');
  });
});

describe('act --list over a hub', () => {
  it('names what each host lets a hub fire', async () => {
    const r = await fleet(['act', '--list']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^build1: .*approve/m);
    expect(r.stdout).toMatch(/^laptop: .*approve/m);
    expect(r.stdout).toMatch(/^ {2}claude: .*approve=keys/m);
    const j = JSON.parse((await fleet(['act', '--list', '--json'])).stdout) as { schema: number; hosts: { host: string; actions_allowed: string[] }[] };
    expect(j.schema).toBe(1);
    expect(j.hosts.map((h) => h.host).sort()).toEqual(['build1', 'laptop']);
  });

  it('with a pane, says which would fire there now, judged on the host', async () => {
    const r = await fleet(['act', '--list', '--json', '--host', 'build1', '--pane', blocked.pane]);
    expect(r.code).toBe(0);
    const j = JSON.parse(r.stdout) as { schema: 1; host: string; actions: { name: string; fireable: boolean; reason: string | null }[] };
    expect(j.host).toBe('build1');
    expect(j.actions.find((a) => a.name === 'approve')).toMatchObject({ fireable: true, reason: null });
    expect(j.actions.find((a) => a.name === 'compact')?.fireable).toBe(false);
    expect(await settled(blocked)).toBe('');
  });
});

describe('doctor over a hub', () => {
  it("reports each host's link, refusal, clock offset, collector version and notifications", async () => {
    const r = await fleet(['doctor', '--json']);
    expect(r.code).toBe(0);
    const j = JSON.parse(r.stdout) as { schema: 1; hosts: Record<string, unknown>[] };
    expect(j.schema).toBe(1);
    const b = j.hosts.find((h) => h.host === 'build1')!;
    expect(Object.keys(b)).toEqual([
      'host',
      'transport',
      'reachable',
      'stale',
      'reason',
      'last_seen_ms',
      'last_refusal',
      'clock_offset_ms',
      'collector_version',
      'servers',
      'agents',
      'notifications',
      'problems',
    ]);
    expect(b).toMatchObject({ reachable: true, stale: false, last_refusal: null, servers: 1, agents: 2, problems: [] });
    expect(typeof b.clock_offset_ms).toBe('number');
    expect(b.collector_version).toMatch(/^\d+\.\d+/);
    expect(b.notifications).toMatchObject({ failed: 0 });
    const text = await fleet(['doctor']);
    expect(text.stdout).toMatch(/^build1: ok$/m);
    expect(text.stdout).toMatch(/^ {2}link: up over ws, last heard \d+s ago$/m);
    expect(text.stdout).toMatch(/^ {2}clock offset: -?\d+ ms$/m);
  });
});

describe('subscribe over a hub without --json', () => {
  it('prints each agent as it stands, in words, host first', async () => {
    const r = await tma(['--hub', hub.url, '--token-file', join(dir, 'viewer'), 'subscribe'], { env: cliEnv(), timeoutMs: 3000 });
    // The stream runs until killed (the helper's timeout); what it printed first is the point.
    expect(r.stdout).toMatch(new RegExp(`^\\d\\d:\\d\\d:\\d\\d build1 %\\d+ claude blocked \\(permission\\) for \\d+[smhd] main:0\\.0$`, 'm'));
    expect(r.stdout).not.toContain('{');
  }, 30_000);
});

describe('jump over a hub, through a real sshd', () => {
  let sshd: Sshd;
  let here: ScratchTmux;

  beforeAll(async () => {
    sshd = await startSshd();
    here = new ScratchTmux('fvh');
    here.start('desk');
    writeFileSync(join(dir, 'known_hosts'), `${sshd.knownHostsLine}\n`);
    const opts = [
      '-p',
      String(sshd.port),
      '-i',
      sshd.clientKey,
      '-o',
      `UserKnownHostsFile=${join(dir, 'known_hosts')}`,
      '-o',
      'StrictHostKeyChecking=yes',
      '-o',
      'BatchMode=yes',
    ];
    writeFileSync(join(dir, 'cli-cfg/tma/config.toml'), `[hosts.build1]\nssh = "${sshd.user}@127.0.0.1"\nssh_options = ${JSON.stringify(opts)}\n`);
  });

  afterAll(() => {
    here?.kill();
    sshd?.stop();
  });

  it('opens a window here running ssh that lands on the pane, its window and pane selected', async () => {
    // The target sits in window 1 while window 0 is current: landing there proves the selection.
    expect(build1.tmux('display-message', '-p', '-t', idle.pane, '#{window_index}').trim()).toBe('1');
    const inside = { TMUX: `${here.socketPath()},1,0`, TMUX_PANE: '%0' };
    const r = await fleet(['jump', '--host', 'build1', '--pane', idle.pane], inside);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(here.tmux('list-windows', '-F', '#{window_name}')).toContain('build1:main');
    let client = '';
    await waitFor(
      () => {
        client = build1.tmux('list-clients', '-F', '#{client_name}').trim();
        return client !== '';
      },
      'a client attached on build1 over ssh',
      15_000,
    );
    await waitFor(() => build1.tmux('display-message', '-p', '-c', client, '#{pane_id}').trim() === idle.pane, 'the client on the jumped-to pane', 5000);
    expect(build1.tmux('display-message', '-p', '-c', client, '#{window_index} #{pane_active}').trim()).toBe('1 1');
    expect(await settled(idle)).toBe('');
  }, 30_000);

  it('from tma watch --hub, Enter on a remote row opens the ssh window and lands on that pane', async () => {
    const before = new Set(build1.tmux('list-clients', '-F', '#{client_name}').split('\n').filter(Boolean));
    // The watch runs in a pane of this machine's server, as a person runs it.
    const t = tuiPane(here, 150, 30);
    t.type(tmaLine({ XDG_CONFIG_HOME: join(dir, 'cli-cfg') }, ['--hub', hub.url, '--token-file', join(dir, 'operator'), 'watch', '--table']));
    t.keys('Enter');
    await t.until((x) => /○ idle .* build1 +main:1\.0/.test(x), 'the idle row of build1 on the watch', 20_000);
    // Narrow the rows to that one, then Enter on it.
    t.keys('/');
    t.type('build1 main:1');
    t.keys('Enter');
    await t.until((x) => !/laptop +main/.test(x) && /build1 +main:1\.0/.test(x), 'only the idle row left');
    t.keys('Enter');
    await waitFor(() => here.tmux('list-windows', '-t', 'tui', '-F', '#{window_name}').includes('build1:main'), 'the ssh window beside the watch', 10_000);
    let client = '';
    await waitFor(
      () => {
        client =
          build1
            .tmux('list-clients', '-F', '#{client_name}')
            .split('\n')
            .find((c) => c && !before.has(c)) ?? '';
        return client !== '';
      },
      'a new client attached on build1 over ssh',
      15_000,
    );
    await waitFor(() => build1.tmux('display-message', '-p', '-c', client, '#{pane_id}').trim() === idle.pane, 'the client on the jumped-to pane', 5000);
    expect(build1.tmux('display-message', '-p', '-c', client, '#{window_index} #{pane_active}').trim()).toBe('1 1');
    await t.until((x) => x.includes('jumped to build1 main:1.0'), 'the watch saying where it jumped');
    t.keys('q');
    expect(await settled(idle)).toBe('');
  }, 45_000);

  it('outside tmux, prints the ssh command; without a destination, says how to add one', async () => {
    const r = await fleet(['jump', '--host', 'build1', '--pane', idle.pane]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^ssh -t -p \d+ /);
    expect(r.stdout).toContain(` 'tmux -S ${build1.socketPath()} attach-session -t =main \\; select-window -t =main:1 \\; select-pane -t ${idle.pane}'\n`);
    const none = await fleet(['jump', '--host', 'laptop', '--pane', farBlocked.pane]);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('[hosts.laptop]');
    expect(none.stderr).toContain('ssh = "user@laptop"');
  });
});
