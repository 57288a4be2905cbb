// Chaos run (not in CI): a real hub process, N WebSocket collectors and M ssh collectors (through a
// real sshd on loopback), each following its own scratch tmux server with a stand-in claude.
// Meanwhile: links frozen with SIGSTOP, collectors and the hub killed and restarted, a hostile
// collector sending malformed, oversized and deep frames, bad tokens, and operators approving
// permission prompts throughout. At the end it prints what must be zero and what it cost.
//
//   npm run build && node dist/bench/chaos.js --duration 600 --collectors 20 --ssh 2

import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { freePort } from '../test/support/ports.js';
import { REPO, ScratchTmux, type StandIn } from '../test/support/scratch-tmux.js';
import { SCREENS } from '../test/support/screens.js';
import { startSshd, type Sshd } from '../test/support/sshd.js';
import { atBenchExit } from './scratch-server.js';

const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const DURATION_S = arg('duration', 120);
const N_WS = arg('collectors', 20);
const N_SSH = arg('ssh', 2);
const SEED_MARK = `tma-chaos-${randomBytes(4).toString('hex')}`;
process.env.TMA_CHAOS_RUN = SEED_MARK;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const rand = (n: number) => Math.floor(Math.random() * n);
const dir = mkdtempSync(join(tmpdir(), 'tma-chaos-'));
process.env.TMUX_TMPDIR = join(dir, 'tmux');
mkdirSync(process.env.TMUX_TMPDIR);
const TMA = join(REPO, 'bin/tma.js');
const OP_TOKEN = randomBytes(16).toString('hex');
const log = (line: string) => process.stderr.write(`[chaos ${new Date().toISOString().slice(11, 19)}] ${line}\n`);

interface Site {
  host: string;
  kind: 'ws' | 'ssh';
  scratch: ScratchTmux;
  agent: StandIn;
  token: string;
  child: ChildProcess | null;
  stopped: boolean;
  /** Slots whose final answer was `sent`: each must show as exactly one "1" in the key log. */
  sentSlots: Set<string>;
}

const sites: Site[] = [];
let hubProc: ChildProcess | null = null;
let hubPort = 0;
let hubCrashes = 0;
let hubKills = 0;
let peakHubRssKb = 0;
const latencies: number[] = [];
let running = true;

function collectorEnv(host: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    TMUX: '',
    TMUX_PANE: '',
    XDG_RUNTIME_DIR: join(dir, `run-${host}`),
    XDG_CONFIG_HOME: join(dir, 'cfg'),
    XDG_STATE_HOME: join(dir, `state-${host}`),
  };
}

function startWsCollector(s: Site): void {
  const child = spawn(
    process.execPath,
    [
      TMA,
      'collector',
      '--hub',
      `ws://127.0.0.1:${hubPort}`,
      '--token-file',
      join(dir, `${s.host}.token`),
      '--host-name',
      s.host,
      '--socket-name',
      s.scratch.name,
      '--interval',
      '1',
    ],
    { env: collectorEnv(s.host), stdio: ['ignore', 'ignore', 'ignore'] },
  );
  s.child = child;
  s.stopped = false;
}

function writeConfig(sshd: Sshd | null): string {
  const lines = [`listen = "127.0.0.1:${hubPort}"`, 'stale_after_secs = 15'];
  for (const s of sites.filter((x) => x.kind === 'ws')) lines.push('[[collector]]', `host = "${s.host}"`, `token = "${s.token}"`);
  lines.push('[[collector]]', 'host = "hostile"', `token = "hostile-${OP_TOKEN}"`);
  lines.push('[[client]]', 'name = "chaos-op"', `token = "${OP_TOKEN}"`, 'role = "operator"');
  if (sshd) {
    for (const s of sites.filter((x) => x.kind === 'ssh')) {
      lines.push(
        '[[ssh]]',
        `name = "${s.host}"`,
        'host = "127.0.0.1"',
        `port = ${sshd.port}`,
        `user = "${sshd.user}"`,
        `identity = "${sshd.clientKey}"`,
        `known_hosts = "${join(dir, 'known_hosts')}"`,
        `command = "${join(dir, `${s.host}.sh`)}"`,
      );
    }
  }
  const path = join(dir, 'hub.toml');
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

function startHub(config: string): void {
  const p = spawn(process.execPath, [TMA, 'hub', '--config', config, '--no-local'], {
    env: { ...process.env, TMA_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let tail = '';
  p.stderr.on('data', (d) => (tail = (tail + String(d)).slice(-2000)));
  p.on('exit', (code, signal) => {
    if (hubProc === p && running) {
      hubCrashes++;
      log(`HUB CRASHED (code ${code}, signal ${signal}): ${tail.slice(-500)}`);
      hubProc = null;
      startHub(config);
    }
  });
  hubProc = p;
}

function sampleHubRss(): void {
  const pid = hubProc?.pid;
  if (!pid) return;
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const hwm = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
    peakHubRssKb = Math.max(peakHubRssKb, hwm);
  } catch {
    // between restarts
  }
}

async function api(path: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`http://127.0.0.1:${hubPort}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${OP_TOKEN}`, 'content-type': 'application/json', ...(init.headers ?? {}) },
    signal: AbortSignal.timeout(15_000),
  });
}

type Row = { host: string; pane: string; state: string; stale: boolean; episode_ms: number; server: string };

async function rows(): Promise<Row[] | null> {
  const t0 = performance.now();
  try {
    const r = await api('/v1/agents');
    const d = (await r.json()) as { agents: Row[] };
    latencies.push(performance.now() - t0);
    return d.agents;
  } catch {
    return null;
  }
}

/** One operator: find a fresh blocked stand-in, approve it with a slot, ask again until the answer is final. */
async function operator(id: number): Promise<void> {
  while (running) {
    await sleep(200 + rand(800));
    const all = await rows();
    if (!all) continue;
    const candidates = all.filter((r) => r.state === 'blocked' && !r.stale && sites.some((s) => s.host === r.host));
    if (candidates.length === 0) continue;
    const r = candidates[rand(candidates.length)]!;
    const site = sites.find((s) => s.host === r.host)!;
    const slot = `chaos-${id}-${randomBytes(6).toString('hex')}`;
    const body = JSON.stringify({ host: r.host, server: r.server, pane: r.pane, action: 'approve', slot, expect_episode_ms: r.episode_ms });
    for (let tries = 0; tries < 20 && running; tries++) {
      let outcome: string | null = null;
      try {
        const res = await api('/v1/act', { method: 'POST', body });
        if (res.status === 200) outcome = ((await res.json()) as { outcome: string }).outcome;
        else outcome = `http-${res.status}`;
      } catch {
        outcome = null;
      }
      if (outcome === 'sent') {
        site.sentSlots.add(slot);
        // The person's prompt is answered: a new one comes up a little later.
        void (async () => {
          await sleep(300);
          await site.agent.paint(SCREENS.claudeIdle).catch(() => undefined);
          await sleep(500 + rand(1500));
          if (running) await site.agent.paint(SCREENS.claudeBlocked).catch(() => undefined);
        })();
        break;
      }
      if (outcome === 'timeout' || outcome === null || outcome === 'http-503') {
        await sleep(500);
        continue;
      }
      break;
    }
  }
}

/**
 * What one stand-in's key log says (it marks each paint with a line "@paint NAME"): approve keys
 * beyond the first on one shown prompt (a prompt answered twice), and keys that arrived while no
 * prompt was on screen. Counting keys against `sent` answers would blame a key whose answer the
 * operator never got (hub killed mid-act) as a double.
 */
function keyAudit(log: string): { twice: number; offPrompt: number; ones: number } {
  const blocked = SCREENS.claudeBlocked.split('/').pop()!;
  let twice = 0;
  let offPrompt = 0;
  let ones = 0;
  let screen = '';
  for (const part of log.split(/\n@paint ([^\n]*)\n/).entries()) {
    const [i, text] = part;
    if (i % 2 === 1) {
      screen = text;
      continue;
    }
    const n = (text.match(/1/g) ?? []).length;
    ones += n;
    if (screen === blocked) twice += Math.max(0, n - 1);
    else offPrompt += n;
  }
  return { twice, offPrompt, ones };
}

const DEEP = (depth: number) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);

/** A collector that sends everything a collector must not. */
async function hostile(): Promise<void> {
  while (running) {
    await sleep(1000 + rand(2000));
    try {
      const token = rand(4) === 0 ? 'wrong-token' : `hostile-${OP_TOKEN}`;
      const ws = new WebSocket(`ws://127.0.0.1:${hubPort}/v1/collect`, { headers: { authorization: `Bearer ${token}` } });
      ws.on('error', () => undefined);
      await new Promise<void>((resolve) => {
        ws.once('open', () => resolve());
        ws.once('close', () => resolve());
        setTimeout(resolve, 3000);
      });
      if (ws.readyState !== WebSocket.OPEN) continue;
      const epoch = randomBytes(8).toString('hex');
      // Sometimes pretend to be a real host (a second collector for it).
      const as = rand(3) === 0 ? sites[rand(sites.length)]!.host : 'hostile';
      ws.send(JSON.stringify({ type: 'hello', protocol: 1, host: as, collector_version: 'x', epoch, actions_allowed: [] }));
      const row = `{"pane":"%1","agent":"claude","state":"idle","detail":null,"since":1,"since_ms":1,"episode_ms":1,"locator":"x","attention":false,"done":false,"session":null,"transcript":null,"permission_request":null,"stamped_at_ms":null,"context":null,"context_at_ms":null,"muted":false,"tokens":null,"quota":${DEEP(20_000)},"cost_usd":null,"repo":null,"branch":null,"worktree":null,"pending_tool":null,"pending_call":null,"pending_summary":null,"server":"/s","host":"hostile"}`;
      const frames = [
        'not json',
        '{"type":"nope"}',
        '{"type":"snapshot"}',
        'x'.repeat(2 * 1024 * 1024),
        `{"type":"snapshot","epoch":"${epoch}","seq":1,"complete":true,"servers":[{"server":"/s","incarnation":"i","rows":[${row}]}]}`,
        `{"type":"snapshot","epoch":"${epoch}","seq":1,"complete":false,"servers":[{"server":"/s","incarnation":"i","rows":[]}]}`,
        `{"type":"delta","epoch":"${epoch}","seq":2,"server":"/s","incarnation":"i","upserts":[${row}],"removals":[]}`,
      ];
      for (const f of frames) if (ws.readyState === WebSocket.OPEN) ws.send(f);
      await sleep(500);
      ws.terminate();
      // And a body far over the act limit.
      await api('/v1/act', { method: 'POST', body: 'x'.repeat(4 * 1024 * 1024) })
        .then((r) => r.arrayBuffer())
        .catch(() => undefined);
    } catch {
      // the hub may be restarting
    }
  }
}

async function chaos(config: string): Promise<void> {
  while (running) {
    await sleep(2000 + rand(3000));
    if (!running) break;
    const dice = rand(10);
    const wsSites = sites.filter((s) => s.kind === 'ws');
    if (dice < 4 && wsSites.length > 0) {
      // A link cut: the collector freezes (its socket stays open, silent), then thaws.
      const s = wsSites[rand(wsSites.length)]!;
      if (s.child?.pid && !s.stopped) {
        s.stopped = true;
        s.child.kill('SIGSTOP');
        const ms = 3000 + rand(20_000);
        setTimeout(() => {
          s.child?.kill('SIGCONT');
          s.stopped = false;
        }, ms);
      }
    } else if (dice < 7 && wsSites.length > 0) {
      const s = wsSites[rand(wsSites.length)]!;
      if (!s.stopped) {
        s.child?.kill('SIGKILL');
        await sleep(rand(2000));
        if (running) startWsCollector(s);
      }
    } else if (dice < 8) {
      hubKills++;
      const p = hubProc;
      sampleHubRss();
      hubProc = null;
      p?.kill('SIGKILL');
      await sleep(500 + rand(2000));
      if (running) startHub(config);
    }
  }
}

function orphans(): number[] {
  const out: number[] = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    if (Number(pid) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${pid}/environ`, 'utf8').includes(SEED_MARK)) out.push(Number(pid));
    } catch {
      // gone or not ours
    }
  }
  return out;
}

async function main(): Promise<void> {
  hubPort = await freePort();
  log(`dir ${dir}; ${N_WS} ws + ${N_SSH} ssh collectors for ${DURATION_S} s`);
  let sshd: Sshd | null = null;
  if (N_SSH > 0) {
    sshd = await startSshd();
    writeFileSync(join(dir, 'known_hosts'), `${sshd.knownHostsLine}\n`);
  }
  // An interrupted run leaves no hub, collector or sshd behind either (scratch servers register their own).
  atBenchExit(() => {
    hubProc?.kill('SIGKILL');
    for (const s of sites) s.child?.kill('SIGKILL');
    sshd?.stop();
  });
  for (let i = 0; i < N_WS + N_SSH; i++) {
    const kind = i < N_WS ? 'ws' : 'ssh';
    const host = `${kind}${i}`;
    const scratch = new ScratchTmux(`ch${i}`);
    atBenchExit(() => scratch.kill());
    const pane = scratch.start();
    const agent = await scratch.standIn(pane, 'claude', SCREENS.claudeBlocked, { paintMarks: true });
    const token = randomBytes(16).toString('hex');
    writeFileSync(join(dir, `${host}.token`), token);
    if (kind === 'ssh') {
      const e = collectorEnv(host);
      const wrapper = join(dir, `${host}.sh`);
      writeFileSync(
        wrapper,
        `#!/bin/sh\nexport TMA_CHAOS_RUN='${SEED_MARK}' TMUX= TMUX_TMPDIR='${process.env.TMUX_TMPDIR}' XDG_RUNTIME_DIR='${e.XDG_RUNTIME_DIR}' XDG_CONFIG_HOME='${e.XDG_CONFIG_HOME}' XDG_STATE_HOME='${e.XDG_STATE_HOME}'\nexec '${process.execPath}' '${TMA}' collector --stdio --socket-name '${scratch.name}' --interval 1\n`,
      );
      chmodSync(wrapper, 0o755);
    }
    sites.push({ host, kind, scratch, agent, token, child: null, stopped: false, sentSlots: new Set() });
  }
  const config = writeConfig(sshd);
  startHub(config);
  await sleep(1500);
  for (const s of sites.filter((x) => x.kind === 'ws')) startWsCollector(s);

  const rssTimer = setInterval(sampleHubRss, 500);
  const pollers = Array.from({ length: 2 }, async () => {
    while (running) {
      await rows();
      await sleep(250);
    }
  });
  const workers = [operator(1), operator(2), operator(3), hostile(), chaos(config)];
  await sleep(DURATION_S * 1000);
  running = false;
  log('chaos over; letting the fleet settle');
  await Promise.allSettled([...workers, ...pollers]);
  running = true;
  for (const s of sites) {
    if (s.stopped) s.child?.kill('SIGCONT');
    s.stopped = false;
    if (s.kind === 'ws' && (s.child === null || s.child.exitCode !== null || s.child.signalCode !== null)) startWsCollector(s);
  }
  if (!hubProc) startHub(config);
  // The end state every host must converge to: its stand-in idle, fresh at the hub.
  for (const s of sites) await s.agent.paint(SCREENS.claudeIdle).catch(() => undefined);
  let wrong = sites.length;
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    const all = await rows();
    if (all) {
      wrong = sites.filter((s) => {
        const r = all.find((x) => x.host === s.host && x.pane === s.agent.pane);
        return !r || r.stale || r.state !== 'idle';
      }).length;
      // No row the hub holds may belong to anything but our sites (the hostile one never gets in).
      wrong += all.filter((r) => !sites.some((s) => s.host === r.host)).length;
      if (wrong === 0) break;
    }
    await sleep(1000);
  }
  if (wrong > 0) {
    const d = (await api('/v1/agents')
      .then((r) => r.json())
      .catch(() => null)) as { agents: Row[]; hosts: { host: string; reachable: boolean; reason: string | null; last_refusal: unknown }[] } | null;
    for (const s of sites) {
      const r = d?.agents.find((x) => x.host === s.host && x.pane === s.agent.pane);
      const h = d?.hosts.find((x) => x.host === s.host);
      if (!r || r.stale || r.state !== 'idle') log(`wrong: ${s.host} row=${r ? `${r.state}${r.stale ? ' stale' : ''}` : 'missing'} host=${JSON.stringify(h)}`);
    }
  }
  sampleHubRss();
  running = false;
  clearInterval(rssTimer);

  let twice = 0;
  let unseen = 0;
  let sent = 0;
  let delivered = 0;
  for (const s of sites) {
    const audit = keyAudit(s.agent.keys());
    twice += audit.twice;
    unseen += audit.offPrompt;
    if (audit.twice || audit.offPrompt) log(`keys on ${s.host}: ${JSON.stringify(s.agent.keys().slice(-2000))}`);
    delivered += audit.ones;
    sent += s.sentSlots.size;
  }

  // Shut everything down the way a user would, then look for anything left.
  const hub = hubProc;
  hubProc = null;
  hub?.kill('SIGTERM');
  for (const s of sites) s.child?.kill('SIGTERM');
  await sleep(5000);
  for (const s of sites) s.scratch.kill();
  sshd?.stop();
  await sleep(3000);
  const left = orphans();
  for (const pid of left) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }

  latencies.sort((a, b) => a - b);
  const p99 = latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * 0.99))] ?? NaN;
  const p50 = latencies[Math.floor(latencies.length * 0.5)] ?? NaN;
  console.log(`chaos run: ${DURATION_S} s, ${N_WS} ws + ${N_SSH} ssh collectors, ${hubKills} hub kills`);
  console.log(`rows wrong at end:        ${wrong}`);
  console.log(`keys sent twice:          ${twice}   (keys delivered: ${delivered}; approvals answered sent: ${sent})`);
  console.log(`keys to no prompt:        ${unseen}`);
  console.log(`hub crashes:              ${hubCrashes}`);
  console.log(`peak hub memory (VmHWM):  ${(peakHubRssKb / 1024).toFixed(1)} MiB`);
  console.log(`GET /v1/agents latency:   p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms over ${latencies.length} requests`);
  console.log(`orphaned processes left:  ${left.length}${left.length ? ` (${left.join(' ')})` : ''}`);
  rmSync(dir, { recursive: true, force: true });
  process.exit(wrong === 0 && twice === 0 && unseen === 0 && hubCrashes === 0 && left.length === 0 ? 0 : 1);
}

await main();
