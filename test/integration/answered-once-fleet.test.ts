// A prompt is answered once across the fleet: approves through a hub at 0, 0.3, 1, 2 and 5 s with
// distinct slots, 50 concurrent remote approves, five callers of one slot, over a WebSocket
// collector and over ssh; and what a prompt asks stays on its host unless the host shares it.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FleetDocument, FleetRow } from '../../shared/fleet.js';
import { TOKENS, startTestHub, testConfig, type TestHub } from '../support/hub-harness.js';
import { REPO, ScratchTmux, type StandIn } from '../support/scratch-tmux.js';
import { SCREENS } from '../support/screens.js';
import { startSshd, writeRemoteCollector, type Sshd } from '../support/sshd.js';

const SECOND_PROMPT = join(REPO, 'test/integration/screens/claude-second-prompt.txt');
const SUMMARY_1 = 'Bash command: rm -rf build/.cache';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function tempDir(config: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'tma-once-fleet-'));
  for (const d of ['state', 'run', 'cfg/tma']) mkdirSync(join(dir, d), { recursive: true });
  writeFileSync(join(dir, 'build1'), `${TOKENS.build1}\n`);
  writeFileSync(join(dir, 'cfg/tma/config.toml'), config);
  return dir;
}

const collectorEnv = (dir: string): NodeJS.ProcessEnv => ({
  ...process.env,
  TMUX: '',
  TMUX_PANE: '',
  XDG_STATE_HOME: join(dir, 'state'),
  XDG_RUNTIME_DIR: join(dir, 'run'),
  XDG_CONFIG_HOME: join(dir, 'cfg'),
  TMA_COLLECTOR_HEARTBEAT_MS: '200',
});

async function rowWhen(hub: TestHub, cond: (r: FleetRow) => boolean, what: string, timeoutMs = 20_000): Promise<FleetRow> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const doc = (await (await hub.get('/v1/agents')).json().catch(() => null)) as FleetDocument | null;
    const hit = doc?.agents.find(cond);
    if (hit) return hit;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(doc?.agents)} ${JSON.stringify(doc?.hosts)}`);
    await sleep(100);
  }
}

async function approve(hub: TestHub, row: FleetRow, slot: string): Promise<Record<string, unknown>> {
  const res = await fetch(`${hub.url}/v1/act`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKENS.operator}` },
    body: JSON.stringify({ host: row.host, server: row.server, pane: row.pane, action: 'approve', slot, expect_prompt: row.prompt_id }),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, unknown>;
}

/** Approves at each offset (ms after the first), each with its own slot. */
async function approvesAt(hub: TestHub, row: FleetRow, offsets: number[], tag: string): Promise<Record<string, unknown>[]> {
  const t0 = Date.now();
  return Promise.all(
    offsets.map(async (ms, i) => {
      await sleep(ms - (Date.now() - t0));
      return approve(hub, row, `${tag}-${i}`);
    }),
  );
}

async function settledKeys(a: StandIn): Promise<string> {
  await sleep(300);
  return a.keys();
}

function expectOneSent(results: Record<string, unknown>[], reasons = ['answered', 'locked']): void {
  const all = JSON.stringify(results.map((r) => [r.outcome, r.reason]));
  expect(
    results.filter((r) => r.outcome === 'sent'),
    all,
  ).toHaveLength(1);
  for (const r of results.filter((x) => x.outcome !== 'sent')) {
    expect(r.outcome, all).toBe('refused');
    expect(reasons, all).toContain(r.reason);
  }
}

describe('over a WebSocket collector (share_prompt = false)', { timeout: 120_000 }, () => {
  let scratch: ScratchTmux;
  let hub: TestHub;
  let collector: ChildProcess;
  let log = '';
  let dir: string;
  let agent: StandIn;
  let firstPrompt: string | null = null;

  beforeAll(async () => {
    // Sharing is the default; this host turns it off, so nothing of the prompt may leave it.
    dir = tempDir('[remote]\nallow_actions = ["approve"]\nshare_prompt = false\n');
    scratch = new ScratchTmux('oncews');
    agent = await scratch.standIn(scratch.start(), 'claude', SCREENS.claudeBlocked, { afterKey: { fixture: SECOND_PROMPT, delayMs: 0 } });
    hub = await startTestHub({ heartbeatMs: 500, actTimeoutMs: 20_000 });
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
        '--interval',
        '0.3',
        '--host-name',
        'build1',
      ],
      { env: collectorEnv(dir), stdio: ['ignore', 'ignore', 'pipe'] },
    );
    collector.stderr!.on('data', (d) => (log += d));
  });

  afterAll(async () => {
    collector?.kill('SIGKILL');
    await hub?.close();
    scratch?.kill();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('approves at 0, 0.3, 1, 2 and 5 s: one key; the summary stays on the host and out of every log', async () => {
    const row = await rowWhen(hub, (r) => r.state === 'blocked' && r.prompt_id !== null && !r.stale, 'the blocked row');
    expect(row.prompt_id).toMatch(/^[0-9a-f]{16}$/);
    firstPrompt = row.prompt_id!;
    expect(row.pending_summary).toBeNull();
    expect(row.pending_call).toBeNull();
    const results = await approvesAt(hub, row, [0, 300, 1000, 2000, 5000], 'tap');
    expect(await settledKeys(agent)).toBe('1');
    // This stand-in answers the key by showing its next prompt at once, so the later approves,
    // bound to the prompt their caller saw, meet another one: prompt-changed.
    expectOneSent(results, ['answered', 'locked', 'prompt-changed']);
    expect(results[4]).toMatchObject({ outcome: 'refused', reason: 'prompt-changed' });
    for (const text of [...hub.logLines, log]) {
      expect(text).not.toContain('rm -rf build/.cache');
      expect(text).not.toContain('npm publish');
    }
  });

  it('bound to the first prompt after the second showed: prompt-changed; 50 concurrent approves of the second: one key', async () => {
    // The first key made the stand-in paint the second prompt, in the same blocked run.
    expect(firstPrompt).not.toBeNull();
    const second = await rowWhen(hub, (r) => r.state === 'blocked' && r.prompt_id !== null && r.prompt_id !== firstPrompt && !r.stale, 'the second prompt');
    const stale = await approve(hub, { ...second, prompt_id: firstPrompt }, 'bound-to-first');
    // The first row's prompt was the answered one; if the hub still showed it, the host says so.
    expect(stale).toMatchObject({ outcome: 'refused', exit_code: 4 });
    expect(['prompt-changed', 'answered']).toContain(stale.reason);
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => approve(hub, second, `burst-${i}`)));
    expect(await settledKeys(agent)).toBe('11');
    expectOneSent(results);
    // One slot from five callers at once: every one of them gets the first result.
    const same = await Promise.all(Array.from({ length: 5 }, () => approve(hub, second, 'burst-0')));
    for (const r of same) expect(r).toMatchObject({ outcome: results[0]!.outcome, reason: results[0]!.reason, cached: true });
    expect(await settledKeys(agent)).toBe('11');
  });
});

describe('over ssh, with share_prompt on', { timeout: 120_000 }, () => {
  let sshd: Sshd;
  let scratch: ScratchTmux;
  let hub: TestHub;
  let dir: string;
  let agent: StandIn;

  beforeAll(async () => {
    sshd = await startSshd();
    dir = tempDir('[remote]\nallow_actions = ["approve"]\nshare_prompt = true\n');
    scratch = new ScratchTmux('oncessh');
    agent = await scratch.standIn(scratch.start(), 'claude', SCREENS.claudeBlocked);
    const knownHosts = join(dir, 'known_hosts');
    writeFileSync(knownHosts, `${sshd.knownHostsLine}\n`);
    const wrapper = writeRemoteCollector(dir, scratch.name, 200);
    hub = await startTestHub({
      heartbeatMs: 500,
      actTimeoutMs: 20_000,
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

  it('the shared summary reaches the fleet row; approves at 0, 0.3, 1, 2 and 5 s: one key', async () => {
    const row = await rowWhen(hub, (r) => r.state === 'blocked' && r.prompt_id !== null && !r.stale, 'the blocked row over ssh');
    expect(row.pending_summary).toBe(SUMMARY_1);
    const results = await approvesAt(hub, row, [0, 300, 1000, 2000, 5000], 'ssh');
    expect(await settledKeys(agent)).toBe('1');
    expectOneSent(results);
    expect(results[4]).toMatchObject({ outcome: 'refused', reason: 'answered' });
    expect(hub.logLines.join('')).not.toContain(SUMMARY_1);
  });
});
