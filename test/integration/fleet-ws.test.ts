// The fleet end to end over WebSocket: a real hub (in this process, short heartbeat), real
// `tma collector` processes for two hosts, each following its own scratch tmux server through a
// loopback relay the test can cut, and stand-in agents. The CLI must be built first.
//
// The collectors run with TMA_COLLECTOR_HEARTBEAT_MS (a hidden test knob): the protocol's 5 s
// heartbeat would let this hub's short dead-link timer kill a quiet, healthy link.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EDGE_KEYS, rowKey } from '../../shared/edges.js';
import { FLEET_ROW_KEYS, type FleetDocument, type FleetRow } from '../../shared/fleet.js';
import { startTestHub, testConfig, type TestHub } from '../support/hub-harness.js';
import { REPO, ScratchTmux, waitFor, type StandIn } from '../support/scratch-tmux.js';
import { startTcpProxy, type Tapped, type TcpProxy } from '../support/tcp-proxy.js';

// Short enough to judge "within 3 heartbeats" quickly, long enough that a collector process
// starved of CPU for a moment on a busy 2-core machine is not declared dead by mistake.
const HB_MS = 1000;
const DEAD_MS = 3 * HB_MS;
const HOSTS = ['hostA', 'hostB'] as const;
type Host = (typeof HOSTS)[number];
const TOKENS = { hostA: 'tok-hostA-51c0de', hostB: 'tok-hostB-9e77aa', viewer: 'tok-fleet-viewer-3d1f' } as const;
const MARKED = join(REPO, 'test/integration/screens');
const CLAUDE_IDLE = join(MARKED, 'claude-idle-marked.txt');
const CLAUDE_WORKING = join(MARKED, 'claude-working-marked.txt');
const TITLE_MARK = 'TITLE-MARK-q7v3';

let hub: TestHub;
let dir: string;
const cleanups: (() => void | Promise<void>)[] = [];

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tma-fleet-ws-'));
  for (const h of HOSTS) writeFileSync(join(dir, `${h}.token`), `${TOKENS[h]}\n`);
  writeFileSync(join(dir, 'viewer.token'), `${TOKENS.viewer}\n`);
  // Every collector cycle re-detects, so a repaint reaches the hub within about a second.
  writeFileSync(join(dir, 'config.toml'), '[fold]\nfreshness_secs = 0\n');
  hub = await startTestHub({
    heartbeatMs: HB_MS,
    config: testConfig({
      collectors: HOSTS.map((host) => ({ host, token: TOKENS[host] })),
      clients: [{ name: 'watcher', token: TOKENS.viewer, role: 'viewer' }],
    }),
  });
});

afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) {
    try {
      await c();
    } catch {
      // keep tearing down the rest
    }
  }
  await hub.close();
  rmSync(dir, { recursive: true, force: true });
});

// ---- the fleet under test -----------------------------------------------------------------------

interface Collector {
  child: ChildProcess;
  stderr(): string;
  exited: Promise<void>;
}

interface Site {
  host: Host;
  scratch: ScratchTmux;
  pane: string;
  agent: StandIn;
  proxy: TcpProxy;
  collector: Collector;
}

function launchCollector(host: Host, scratch: ScratchTmux, port: number): Collector {
  const child = spawn(
    process.execPath,
    [
      join(REPO, 'bin/tma.js'),
      'collector',
      '--hub',
      `ws://127.0.0.1:${port}`,
      '--token-file',
      join(dir, `${host}.token`),
      '--host-name',
      host,
      '--socket-name',
      scratch.name,
      '--interval',
      '0.25',
      '--config',
      join(dir, 'config.toml'),
    ],
    {
      env: {
        ...process.env,
        TMUX: '',
        TMUX_PANE: '',
        XDG_RUNTIME_DIR: join(dir, `run-${host}`),
        XDG_CONFIG_HOME: join(dir, 'cfg'),
        TMA_COLLECTOR_HEARTBEAT_MS: '100',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  });
  return { child, stderr: () => err, exited };
}

/** One host: a scratch tmux server with a stand-in agent, and its collector dialling through a relay. */
async function site(host: Host, command: 'claude' | 'codex', screen: string): Promise<Site> {
  const scratch = new ScratchTmux(`fw${host.slice(-1)}`);
  cleanups.push(() => scratch.kill());
  const pane = scratch.start();
  const agent = await scratch.standIn(pane, command, screen);
  const proxy = await startTcpProxy({ host: '127.0.0.1', port: hub.port });
  cleanups.push(() => proxy.close());
  return { host, scratch, pane, agent, proxy, collector: launchCollector(host, scratch, proxy.port) };
}

const doc = (): FleetDocument => hub.store.document();
const rowOf = (s: Site): FleetRow | undefined => doc().agents.find((r) => r.host === s.host && r.pane === s.pane);
const hostOf = (h: Host) => doc().hosts.find((x) => x.host === h);
const fresh = (s: Site, state?: string) => {
  const r = rowOf(s);
  return r !== undefined && !r.stale && hostOf(s.host)?.reachable === true && (state === undefined || r.state === state);
};

type Frame = Record<string, unknown> & { type: string; seq?: number; epoch?: string };
const frames = (p: TcpProxy, f: (t: Tapped) => boolean = () => true): (Frame & { conn: number })[] =>
  p.tapped.filter(f).map((t) => ({ ...(JSON.parse(t.text) as Frame), conn: t.conn }));
const up = (p: TcpProxy, conn?: number) => frames(p, (t) => t.dir === 'up' && (conn === undefined || t.conn === conn));
const down = (p: TcpProxy, conn?: number) => frames(p, (t) => t.dir === 'down' && (conn === undefined || t.conn === conn));
/** Highest sequence the collector sent in sequenced frames (not heartbeats). */
const lastSeqSent = (p: TcpProxy) =>
  Math.max(
    0,
    ...up(p)
      .filter((f) => f.type === 'snapshot' || f.type === 'delta' || f.type === 'server')
      .map((f) => f.seq ?? 0),
  );
const rowsIn = (f: Frame): Record<string, unknown>[] =>
  f.type === 'delta'
    ? (f.upserts as Record<string, unknown>[])
    : f.type === 'snapshot'
      ? (f.servers as { rows: Record<string, unknown>[] }[]).flatMap((s) => s.rows)
      : [];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** waitFor that, on timeout, says what the hub held and what the collectors printed. */
async function settle(sites: Site[], cond: () => boolean, what: string, ms: number): Promise<void> {
  try {
    await waitFor(cond, what, ms);
  } catch (e) {
    const d = doc();
    const rows = d.agents.map((r) => `${r.host} ${r.pane} ${r.agent} ${r.state}${r.stale ? ' stale' : ''}`);
    const hosts = d.hosts.map((h) => `${h.host} reachable=${h.reachable} stale=${h.stale} reason=${h.reason}`);
    const logs = sites.map((s) => `${s.host}: ${s.collector.stderr().slice(-600)}`);
    throw new Error(`${(e as Error).message}\nrows: ${rows.join('; ')}\nhosts: ${hosts.join('; ')}\n${logs.join('\n')}`);
  }
}

/**
 * The connection opened after `after` connections: the collector said hello with `epoch`, the hub
 * welcomed it with `resume_from = lastSeq`, and the collector replayed from lastSeq + 1 without
 * any snapshot.
 */
async function expectResumed(s: Site, after: number, epoch: string, lastSeq: number): Promise<number> {
  await waitFor(() => down(s.proxy).some((f) => f.type === 'welcome' && f.conn >= after), `${s.host} welcomed again`, 15_000);
  const conn = down(s.proxy).find((f) => f.type === 'welcome' && f.conn >= after)!.conn;
  expect(up(s.proxy, conn)[0]).toMatchObject({ type: 'hello', host: s.host, epoch });
  expect(down(s.proxy, conn).find((f) => f.type === 'welcome')).toMatchObject({ protocol: 1, resume_from: lastSeq });
  await waitFor(() => fresh(s), `${s.host} fresh after resuming`, 5000);
  return conn;
}

/** The sequenced frames the collector sent on `conn`: no snapshot, and numbered on from lastSeq. */
function expectContinued(s: Site, conn: number, lastSeq: number): void {
  const sequenced = up(s.proxy, conn).filter((f) => f.type !== 'hello' && f.type !== 'heartbeat' && f.type !== 'act_result');
  expect(sequenced.length).toBeGreaterThan(0);
  expect(sequenced.filter((f) => f.type === 'snapshot')).toEqual([]);
  expect(sequenced.map((f) => f.seq)).toEqual(sequenced.map((_, i) => lastSeq + 1 + i));
}

// ---- tests --------------------------------------------------------------------------------------

describe('a fleet of two collectors over WebSocket', () => {
  it('holds both hosts’ rows under distinct (host, server, pane) keys, and no title anywhere', async () => {
    const a = await site('hostA', 'claude', CLAUDE_IDLE);
    const b = await site('hostB', 'codex', 'codex-idle.txt');
    await settle([a, b], () => fresh(a, 'idle') && fresh(b, 'idle'), 'both hosts publishing', 15_000);

    const res = await hub.get('/v1/agents', TOKENS.viewer);
    expect(res.status).toBe(200);
    const text = await res.text();
    const served = JSON.parse(text) as FleetDocument;
    expect(served.agents).toHaveLength(2);
    const ra = served.agents.find((r) => r.host === 'hostA')!;
    const rb = served.agents.find((r) => r.host === 'hostB')!;
    expect(ra).toMatchObject({ pane: a.pane, agent: 'claude', state: 'idle', stale: false, server: expect.stringMatching(new RegExp(`/${a.scratch.name}$`)) });
    expect(rb).toMatchObject({ pane: b.pane, agent: 'codex', state: 'idle', stale: false, server: expect.stringMatching(new RegExp(`/${b.scratch.name}$`)) });
    // Both first panes are %0: only host and server tell them apart.
    expect(ra.pane).toBe(rb.pane);
    expect(new Set(served.agents.map(rowKey)).size).toBe(2);
    for (const r of served.agents) expect(Object.keys(r)).toEqual([...FLEET_ROW_KEYS]);
    expect(served.hosts.map((h) => [h.host, h.transport, h.reachable, h.stale])).toEqual([
      ['hostA', 'ws', true, false],
      ['hostB', 'ws', true, false],
    ]);

    // Titles never leave their host: not in the document, nor in any frame a collector sent.
    expect(text).not.toContain('"title"');
    expect(text).not.toContain(TITLE_MARK);
    expect(hub.logLines.join('')).not.toContain(TITLE_MARK);
    for (const s of [a, b]) {
      const sent = s.proxy.tapped.filter((t) => t.dir === 'up');
      expect(sent.length).toBeGreaterThan(1);
      for (const t of sent) {
        expect(t.text).not.toContain('"title"');
        expect(t.text).not.toContain(TITLE_MARK);
      }
    }
  });

  it('a killed collector’s host is stale within 3 heartbeats with its rows kept; a restarted one is fresh from a new snapshot', async () => {
    const a = await site('hostA', 'claude', CLAUDE_WORKING);
    const b = await site('hostB', 'codex', 'codex-idle.txt');
    await settle([a, b], () => fresh(a, 'working') && fresh(b, 'idle'), 'both hosts publishing', 15_000);
    const firstEpoch = up(a.proxy, 0)[0]!.epoch!;

    const killedAt = Date.now();
    a.collector.child.kill('SIGKILL');
    await waitFor(() => hostOf('hostA')?.stale === true, 'hostA stale', DEAD_MS + 1000);
    expect(Date.now() - killedAt).toBeLessThan(DEAD_MS);

    // Kept, marked, and never turned into idle; the other host is untouched.
    const kept = rowOf(a)!;
    expect(kept).toMatchObject({ host: 'hostA', pane: a.pane, state: 'working', stale: true });
    const status = hostOf('hostA')!;
    expect(status).toMatchObject({ reachable: false, stale: true, reason: expect.any(String) });
    expect(status.last_seen_ms).toBeGreaterThanOrEqual(killedAt - DEAD_MS);
    expect(status.last_seen_ms).toBeLessThanOrEqual(Date.now());
    expect(rowOf(b)).toMatchObject({ stale: false, state: 'idle' });
    const served = (await (await hub.get('/v1/agents', TOKENS.viewer)).json()) as FleetDocument;
    expect(served.agents.find((r) => r.host === 'hostA')).toMatchObject({ stale: true, state: 'working' });

    // A new process is a new epoch: the hub cannot resume it and takes a complete snapshot.
    const connsBefore = a.proxy.connections;
    a.collector = launchCollector('hostA', a.scratch, a.proxy.port);
    await waitFor(() => up(a.proxy).some((f) => f.type === 'snapshot' && f.conn >= connsBefore), 'snapshot from the new collector', 15_000);
    await waitFor(() => fresh(a, 'working'), 'hostA fresh again', 5000);
    const conn = up(a.proxy).find((f) => f.type === 'snapshot' && f.conn >= connsBefore)!.conn;
    const hello = up(a.proxy, conn)[0]!;
    expect(hello).toMatchObject({ type: 'hello', host: 'hostA' });
    expect(hello.epoch).not.toBe(firstEpoch);
    expect(down(a.proxy, conn).find((f) => f.type === 'welcome')).toMatchObject({ resume_from: null });
    const snap = up(a.proxy, conn).find((f) => f.type === 'snapshot')!;
    expect(snap).toMatchObject({ epoch: hello.epoch, complete: true });
    expect(rowsIn(snap).find((r) => r.pane === a.pane)).toMatchObject({ state: 'working', host: 'hostA' });
    expect(hostOf('hostA')).toMatchObject({ reachable: true, stale: false, reason: null });
  });

  it('a link gone silent is dead by the hub’s timer within 3 heartbeats, not before; the collector then resumes without a snapshot', async () => {
    const a = await site('hostA', 'claude', CLAUDE_IDLE);
    await settle([a], () => fresh(a, 'idle'), 'hostA publishing', 15_000);
    const epoch = up(a.proxy, 0)[0]!.epoch!;
    const connsBefore = a.proxy.connections;

    // Nothing is closed: bytes just stop, and reconnecting is held off meanwhile.
    a.proxy.refuse(true);
    a.proxy.stall();
    const lastSeq = lastSeqSent(a.proxy);
    // The hub last heard from the collector when the relay last passed it a message.
    const lastHeard = Math.max(...a.proxy.tapped.filter((t) => t.dir === 'up').map((t) => t.at));
    const deadline = lastHeard + DEAD_MS;

    await sleep(deadline - 400 - Date.now());
    expect(hostOf('hostA')).toMatchObject({ reachable: true, stale: false });
    await waitFor(() => hostOf('hostA')?.stale === true, 'hostA stale', DEAD_MS + 2000);
    // Timer lateness on a busy machine is allowed a little; a missing timer would take far longer.
    expect(Date.now()).toBeLessThan(deadline + 400);
    expect(hub.logLines.some((l) => l.includes('collector link silent') && l.includes('hostA'))).toBe(true);
    expect(rowOf(a)).toMatchObject({ stale: true, state: 'idle' });

    a.proxy.refuse(false);
    const conn = await expectResumed(a, connsBefore, epoch, lastSeq);
    // The resumed link carries live changes on the same sequence.
    await a.agent.paint(CLAUDE_WORKING);
    await waitFor(() => fresh(a, 'working'), 'a change after the resume reached the hub', 8000);
    expectContinued(a, conn, lastSeq);
    expect(hub.metrics.resyncs).toBe(0);
  });

  it('a cut connection restored without restarting the collector resumes from the last sequence, replaying what changed meanwhile', async () => {
    const a = await site('hostA', 'claude', CLAUDE_IDLE);
    await settle([a], () => fresh(a, 'idle'), 'hostA publishing', 15_000);
    const epoch = up(a.proxy, 0)[0]!.epoch!;
    const snapshotsBefore = up(a.proxy).filter((f) => f.type === 'snapshot').length;
    const reconnectsBefore = hub.metrics.reconnects;

    // Freeze what is in flight so the tap's last sequence is exactly what the hub applied, then cut.
    a.proxy.refuse(true);
    a.proxy.stall();
    await sleep(150);
    const lastSeq = lastSeqSent(a.proxy);
    const connsBefore = a.proxy.connections;
    const cutAt = Date.now();
    a.proxy.sever();
    await waitFor(() => hostOf('hostA')?.stale === true, 'hostA stale after the cut', 3000);
    expect(Date.now() - cutAt).toBeLessThan(DEAD_MS);

    // The agent starts working while the host is cut off; the collector sees it (it stamps the pane).
    await a.agent.paint(CLAUDE_WORKING);
    await waitFor(() => a.scratch.option(a.pane, '@agent_state') === 'working', 'collector saw working', 8000);
    await sleep(300);
    expect(rowOf(a)).toMatchObject({ stale: true, state: 'idle' });

    a.proxy.refuse(false);
    const conn = await expectResumed(a, connsBefore, epoch, lastSeq);
    await waitFor(() => fresh(a, 'working'), 'the change made while cut off reached the hub', 5000);
    expectContinued(a, conn, lastSeq);
    const replayed = up(a.proxy, conn).find((f) => f.type === 'delta' && rowsIn(f).some((r) => r.pane === a.pane && r.state === 'working'));
    expect(replayed).toBeDefined();
    expect(up(a.proxy).filter((f) => f.type === 'snapshot')).toHaveLength(snapshotsBefore);
    expect(hub.metrics.reconnects).toBe(reconnectsBefore + 1);
    expect(hub.metrics.resyncs).toBe(0);
    expect(a.collector.child.exitCode).toBeNull();
  });
});

// ---- fleet verbs against the live fleet ---------------------------------------------------------

interface Background {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  settled(): boolean;
  result: Promise<number>;
}

/** A long-running `tma --hub … VERB`, its output read as it comes. */
function tmaBackground(args: string[]): Background {
  const child = spawn(process.execPath, [join(REPO, 'bin/tma.js'), '--hub', hub.url, '--token-file', join(dir, 'viewer.token'), ...args], {
    env: { ...process.env, TMUX: '', TMUX_PANE: '', TMA_HUB: '', TMA_HUB_TOKEN: '', XDG_CONFIG_HOME: join(dir, 'client-cfg') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  let done = false;
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  const result = new Promise<number>((r) =>
    child.once('close', (code, signal) => {
      done = true;
      r(code ?? (signal ? 128 : 1));
    }),
  );
  cleanups.push(async () => {
    if (!done) child.kill('SIGKILL');
    await result;
  });
  return { child, stdout: () => out, stderr: () => err, settled: () => done, result };
}

describe('fleet verbs over the live fleet', () => {
  it('wait --all --until idle across both hosts returns when the last stand-in goes idle', async () => {
    const a = await site('hostA', 'claude', CLAUDE_WORKING);
    const b = await site('hostB', 'codex', 'codex-working.txt');
    await settle([a, b], () => fresh(a, 'working') && fresh(b, 'working'), 'both working at the hub', 15_000);
    const w = tmaBackground(['wait', '--until', 'idle', '--all', '--json', '--timeout', '25']);

    await a.agent.paint(CLAUDE_IDLE);
    await waitFor(() => fresh(a, 'idle'), 'hostA idle at the hub', 8000);
    // The waiter polls once a second: give it two looks at "one idle, one working".
    await sleep(2200);
    expect(w.settled()).toBe(false);

    await b.agent.paint('codex-idle.txt');
    expect(await w.result).toBe(0);
    const out = JSON.parse(w.stdout()) as { schema: number; agents: FleetRow[] };
    expect(out.schema).toBe(1);
    expect(out.agents.map((r) => [r.host, r.pane, r.state]).sort()).toEqual([
      ['hostA', a.pane, 'idle'],
      ['hostB', b.pane, 'idle'],
    ]);
  }, 60_000);

  it('a member on a stale host does not satisfy wait --all, and the waiter says so on stderr', async () => {
    const a = await site('hostA', 'claude', CLAUDE_WORKING);
    const b = await site('hostB', 'codex', 'codex-idle.txt');
    await settle([a, b], () => fresh(a, 'working') && fresh(b, 'idle'), 'both hosts publishing', 15_000);
    const w = tmaBackground(['wait', '--until', 'idle', '--all', '--json', '--timeout', '40']);
    await sleep(1200);

    // hostB goes dark with its row idle; then hostA's agent goes idle too.
    b.collector.child.kill('SIGKILL');
    await waitFor(() => hostOf('hostB')?.stale === true, 'hostB stale', 5000);
    await a.agent.paint(CLAUDE_IDLE);
    await waitFor(() => fresh(a, 'idle'), 'hostA idle at the hub', 8000);
    await waitFor(() => w.stderr().includes('host hostB is stale'), 'the waiter naming the stale host', 5000);
    expect(rowOf(b)).toMatchObject({ state: 'idle', stale: true });
    await sleep(1200);
    expect(w.settled()).toBe(false);

    // Heard from again, the same idle row now counts.
    b.collector = launchCollector('hostB', b.scratch, b.proxy.port);
    expect(await w.result).toBe(0);
    const out = JSON.parse(w.stdout()) as { agents: FleetRow[] };
    expect(out.agents.map((r) => [r.host, r.state]).sort()).toEqual([
      ['hostA', 'idle'],
      ['hostB', 'idle'],
    ]);
    expect(w.stderr().match(/host hostB is stale/g)).toHaveLength(1);
  }, 60_000);

  it('subscribe --json --events delivers an edge with host and server when a stand-in flips', async () => {
    const a = await site('hostA', 'claude', CLAUDE_IDLE);
    const b = await site('hostB', 'codex', 'codex-idle.txt');
    await settle([a, b], () => fresh(a, 'idle') && fresh(b, 'idle'), 'both hosts publishing', 15_000);
    const s = tmaBackground(['subscribe', '--json', '--events']);
    const lines = () =>
      s
        .stdout()
        .split('\n')
        .filter((l) => l.trim())
        .map((l) => JSON.parse(l) as Record<string, unknown>);
    // The stream is open once the hub counts it.
    await waitFor(() => hub.metrics.subscribers.get('sse') === 1, 'subscriber connected', 8000);

    await b.agent.paint('codex-working.txt');
    const isFlip = (e: Record<string, unknown>) => e.host === 'hostB' && e.pane === b.pane && e.from === 'idle' && e.to === 'working';
    await waitFor(() => lines().some(isFlip), 'an idle → working edge for hostB', 10_000);
    const edge = lines().find(isFlip)!;
    expect(Object.keys(edge)).toEqual([...EDGE_KEYS]);
    expect(edge).toMatchObject({ schema: 1, agent: 'codex', host: 'hostB', server: rowOf(b)!.server });
    expect(edge.server).toMatch(new RegExp(`/${b.scratch.name}$`));
    // Nothing moved on hostA, so no edge names it as changing.
    expect(lines().some((e) => e.host === 'hostA' && e.from !== '' && e.from !== e.to)).toBe(false);
    expect(s.settled()).toBe(false);
  }, 60_000);
});
