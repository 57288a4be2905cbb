// Two real hub processes on one real nats-server, one real collector given both (`--hub a,b`) on a
// scratch tmux with a stand-in agent: both hubs show its rows, approves through the hub it is not
// linked to reach it once, and `kill -9` of the linked hub leaves the other serving it (the
// collector moves there within 5 s, the host stale at most that long); the killed hub, restarted,
// serves the same document before it answers a reader; and a host whose hub died while nothing
// redials it is shown stale with the reason.

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

const SECOND_PROMPT = join(REPO, 'test/integration/screens/claude-second-prompt.txt');
// The default lease: the move within 5 s holds for a hub.toml that does not set one.
const LEASE_SECS = 3;

const toml = (natsUrl: string) => `
[[collector]]
host = "build1"
token = "${TOKENS.build1}"
[[client]]
name = "olga"
token = "${TOKENS.operator}"
role = "operator"
[nats]
url = "${natsUrl}"
fleet_key_file = "${testFleetKeyFile()}"
lease_secs = ${LEASE_SECS}
`;

async function agents(url: string): Promise<FleetDocument | null> {
  const r = await fetch(`${url}/v1/agents`, { headers: { authorization: `Bearer ${TOKENS.operator}` }, signal: AbortSignal.timeout(3000) }).catch(() => null);
  return r?.ok ? ((await r.json()) as FleetDocument) : null;
}
const unclocked = (text: string) => text.replace(/"(last_seen_ms|clock_offset_ms)":-?\d+/g, '"$1":0');

const blocked = (url: string, not: string | null = null) =>
  when(`a fresh blocked row on ${url}`, async () =>
    (await agents(url))?.agents.find((r) => r.state === 'blocked' && r.prompt_id !== null && r.prompt_id !== not && !r.stale),
  );

async function approve(url: string, row: FleetRow, slot: string): Promise<Record<string, unknown>> {
  const res = await fetch(`${url}/v1/act`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKENS.operator}` },
    body: JSON.stringify({ host: row.host, server: row.server, pane: row.pane, action: 'approve', slot, expect_prompt: row.prompt_id }),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, unknown>;
}

describe('two hub processes on NATS, one collector', { timeout: 180_000 }, () => {
  let nats: NatsNode;
  let scratch: ScratchTmux;
  let agent: StandIn;
  let dir: string;
  let a: HubProcess;
  let b: HubProcess;
  let portA: number;
  let portB: number;
  const collectors: ChildProcess[] = [];

  const collector = (hubs: string): ChildProcess => {
    const c = spawn(
      process.execPath,
      [
        join(REPO, 'bin/tma.js'),
        'collector',
        '--hub',
        hubs,
        '--token-file',
        join(dir, 'build1'),
        '--socket-name',
        scratch.name,
        '--interval',
        '0.3',
        '--host-name',
        'build1',
      ],
      {
        env: {
          ...process.env,
          TMUX: '',
          TMUX_PANE: '',
          XDG_STATE_HOME: join(dir, 'state'),
          XDG_RUNTIME_DIR: join(dir, 'run'),
          XDG_CONFIG_HOME: join(dir, 'cfg'),
        },
        stdio: ['ignore', 'ignore', 'ignore'],
      },
    );
    collectors.push(c);
    return c;
  };

  beforeAll(async () => {
    nats = await startNats();
    dir = mkdtempSync(join(tmpdir(), 'tma-nats-hubs-'));
    for (const d of ['state', 'run', 'cfg/tma', 'a', 'b']) mkdirSync(join(dir, d), { recursive: true });
    writeFileSync(join(dir, 'build1'), `${TOKENS.build1}\n`);
    writeFileSync(join(dir, 'cfg/tma/config.toml'), '[remote]\nallow_actions = ["approve"]\n');
    scratch = new ScratchTmux('natshubs');
    agent = await scratch.standIn(scratch.start(), 'claude', SCREENS.claudeBlocked, { afterKey: { fixture: SECOND_PROMPT, delayMs: 0 } });
    portA = await freePort();
    portB = await freePort();
    a = await startHubProcess(join(dir, 'a'), portA, toml(nats.url));
    b = await startHubProcess(join(dir, 'b'), portB, toml(nats.url));
    collector(`ws://127.0.0.1:${portA},ws://127.0.0.1:${portB}`);
  });

  afterAll(async () => {
    for (const c of collectors) c.kill('SIGKILL');
    await a?.kill();
    await b?.kill();
    scratch?.kill();
    nats?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('both hubs show the row; an approve through the other hub is sent and the agent gets one key; 50 through both: one key', async () => {
    const onA = await blocked(a.url);
    const onB = await blocked(b.url);
    expect(onB.prompt_id).toBe(onA.prompt_id);
    // The key paints a second prompt: how long from the approve until each hub shows it.
    const t0 = Date.now();
    const seenA = blocked(a.url, onA.prompt_id).then((r) => ({ r, ms: Date.now() - t0 }));
    const seenB = blocked(b.url, onA.prompt_id).then((r) => ({ r, ms: Date.now() - t0 }));
    const first = await approve(b.url, onB, 'via-b');
    expect(first).toMatchObject({ outcome: 'sent', host: 'build1' });
    const [x, y] = await Promise.all([seenA, seenB]);
    console.log(
      `[nats-hubs] approve through b answered in ${JSON.stringify(first.outcome)}; second prompt on the linked hub after ${x.ms} ms, on the other after ${y.ms} ms`,
    );
    expect(y.ms - x.ms).toBeLessThan(2000);
    await sleep(300);
    expect(agent.keys()).toBe('1');
    // The row as it stands once the screen has settled (the measurement above took its first form).
    await sleep(1000);
    const second = await blocked(b.url, onA.prompt_id);
    expect(second.prompt_id).toBe(y.r.prompt_id);
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => approve(i % 2 ? a.url : b.url, second, `burst-${i}`)));
    await sleep(300);
    const all = JSON.stringify(results.map((r) => [r.outcome, r.reason]));
    expect(agent.keys(), all).toBe('11');
    expect(
      results.filter((r) => r.outcome === 'sent'),
      all,
    ).toHaveLength(1);
    for (const r of results.filter((q) => q.outcome !== 'sent')) expect(['answered', 'locked'], all).toContain(r.reason);
  });

  it('kill -9 of the linked hub: the collector is on the other within 5 s, the host stale no longer than that; the restarted hub serves the same document before any reader', async () => {
    await when('the host fresh on b', async () => ((await agents(b.url))?.hosts.find((h) => h.host === 'build1')?.stale === false ? true : undefined));
    await a.kill();
    // Taken once a has exited: whatever a wrote of the host was heard before this.
    const killedAt = Date.now();
    // The stale spell on b, if one is seen: when it began (ms after the kill) and why.
    const spell: { from: number | null; reason: string | null } = { from: null, reason: null };
    const moved = await when(
      'the collector heard through b',
      async () => {
        const d = await agents(b.url);
        const h = d?.hosts.find((q) => q.host === 'build1');
        if (!h) return undefined;
        const t = Date.now() - killedAt;
        if (h.stale) {
          spell.from ??= t;
          spell.reason ??= h.reason;
          return undefined;
        }
        // Heard from since a died: over b's own link.
        return (h.last_seen_ms ?? 0) > killedAt && d!.agents.some((r) => r.host === 'build1' && !r.stale) ? t : undefined;
      },
      15_000,
      50,
    );
    const staleFor = spell.from === null ? 0 : moved - spell.from;
    console.log(`[nats-hubs] after kill -9: on b after ${moved} ms; shown stale on b for ${staleFor} ms (${spell.reason ?? 'never seen stale'})`);
    expect(moved).toBeLessThan(5000);
    expect(staleFor).toBeLessThan(5000);
    if (spell.reason !== null) expect(spell.reason).toMatch(/stopped renewing/);
    await sleep(1500);
    const restarted = await startHubProcess(join(dir, 'a'), portA, toml(nats.url));
    a = restarted;
    const h = { authorization: `Bearer ${TOKENS.operator}` };
    const [first, other] = await Promise.all([
      fetch(`${a.url}/v1/agents`, { headers: h }).then((r) => r.text()),
      fetch(`${b.url}/v1/agents`, { headers: h }).then((r) => r.text()),
    ]);
    expect(unclocked(first)).toBe(unclocked(other));
    expect(JSON.parse(first).agents.length).toBeGreaterThan(0);
  });

  it('a host whose hub died while nothing redials it is shown stale with the reason, until its collector comes back', async () => {
    const linked = collectors[0]!;
    await when('the host fresh on a', async () => ((await agents(a.url))?.hosts.find((h) => h.host === 'build1')?.stale === false ? true : undefined));
    // The collector, now on b, is frozen: b's death leaves the host with nobody to redial it.
    linked.kill('SIGSTOP');
    try {
      await b.kill();
      const killedAt = Date.now();
      const stale = await when(
        'a to show the host stale',
        async () => {
          const h = (await agents(a.url))?.hosts.find((q) => q.host === 'build1');
          return h?.stale ? { ms: Date.now() - killedAt, reason: h.reason } : undefined;
        },
        10_000,
        50,
      );
      console.log(`[nats-hubs] owner killed, nobody redialling: stale on a after ${stale.ms} ms (${stale.reason})`);
      expect(stale.reason).toMatch(/stopped renewing/);
      expect(stale.ms).toBeLessThan(LEASE_SECS * 1000 + 2000);
      // Nothing comes back as fresh while the collector is away.
      await sleep(1000);
      expect((await agents(a.url))?.agents.filter((r) => r.host === 'build1' && !r.stale)).toEqual([]);
    } finally {
      linked.kill('SIGCONT');
    }
    await when('the host fresh on a again', async () => ((await agents(a.url))?.hosts.find((h) => h.host === 'build1')?.stale === false ? true : undefined));
  });
});
