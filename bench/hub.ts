// Hub throughput and cost while people watch it, each figure beside a baseline from the same run.
// Build first, then run:  npm run build && node --expose-gc dist/bench/hub.js [collectors=1000] [secs per phase=5] [class-change share=0.1]
// Three processes: this one runs the hub (so its CPU and RSS are the hub's), one child plays the
// collectors over real WebSockets, another holds the subscribers and times `/v1/agents`. Each row
// update carries its send time in `repo`, so a subscriber measures send → edge on one clock.
// Phases offer a rate with 0, 1 or 50 subscribers of each mode, then the target mix (50 events +
// 10 changes) at rising rates. Bounded in time; not part of any test run.

import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { WebSocket } from 'ws';
import type { HubConfig } from '../hub/config.js';
import { startHub } from '../hub/server.js';
import { HEARTBEAT_MS } from '../shared/protocol.js';
import { protocolRowObject, type ProtocolRow } from '../shared/row.js';

const PANES = 20;
const EPOCH = 'b3c4d5e6f708192a';
const SERVER = '/tmp/tmux-1000/default';
const STATES = ['working', 'blocked', 'idle'] as const;

function row(host: string, i: number, state: ProtocolRow['state'], repo = 'fleet', tokens = 12345): ProtocolRow {
  return protocolRowObject({
    pane: `%${i}`, agent: 'claude', state, detail: null, since: 1_700_000_000_000, since_ms: 1_700_000_000_000,
    episode_ms: 1_700_000_000_000, locator: `work:${i}.0`, attention: false, done: false, session: null,
    transcript: null, permission_request: null, stamped_at_ms: 1_700_000_000_000, context: 42, context_at_ms: null,
    muted: false, tokens, quota: null, cost_usd: 0.5, repo, branch: 'main', worktree: false,
    pending_tool: null, pending_call: null, pending_summary: null, server: SERVER, host,
  });
}

const pct = (xs: number[], p: number) => (xs.length ? [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]! : NaN);

type Msg = Record<string, unknown>;
const ask = (child: ChildProcess, m: Msg) =>
  new Promise<Msg>((resolve) => {
    child.once('message', (r) => resolve(r as Msg));
    child.send(m);
  });

// ---- collectors (child) --------------------------------------------------------------------------

async function collectors(url: string, hosts: { host: string; token: string }[], share: number): Promise<void> {
  const sockets: WebSocket[] = [];
  const seqs = new Array<number>(hosts.length).fill(0);
  const states = hosts.map(() => new Array<number>(PANES).fill(0));
  await Promise.all(
    hosts.map(({ host, token }, k) =>
      new Promise<void>((resolve, reject) => {
        const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/v1/collect`, { headers: { authorization: `Bearer ${token}` } });
        sockets[k] = ws;
        ws.once('error', reject);
        ws.on('message', (d) => {
          if ((JSON.parse(String(d)) as { type: string }).type !== 'welcome') return;
          const rows = Array.from({ length: PANES }, (_, i) => row(host, i, 'working'));
          ws.send(JSON.stringify({ type: 'snapshot', epoch: EPOCH, seq: 0, complete: true, servers: [{ server: SERVER, incarnation: 'i1', rows }] }));
          resolve();
        });
        ws.once('open', () => ws.send(JSON.stringify({ type: 'hello', protocol: 1, host, collector_version: 'bench', epoch: EPOCH, actions_allowed: [] })));
      }),
    ),
  );
  // Heartbeats keep the links alive between phases, as a real collector's do.
  setInterval(() => {
    const at = Date.now();
    sockets.forEach((ws, k) => ws.send(JSON.stringify({ type: 'heartbeat', at, seq: seqs[k] })));
  }, HEARTBEAT_MS).unref();
  process.send!({ ready: true });
  let next = 0;
  process.on('message', async (m: { rate: number; secs: number }) => {
    let sent = 0;
    let classChanges = 0;
    const started = Date.now();
    const tickMs = 5;
    let carry = 0;
    await new Promise<void>((resolve) => {
      const timer = setInterval(() => {
        const elapsed = Date.now() - started;
        if (elapsed >= m.secs * 1000) {
          clearInterval(timer);
          resolve();
          return;
        }
        // Catch up to the offered rate by the clock, so a late tick sends its share.
        carry = (m.rate * elapsed) / 1000 - sent;
        const now = Date.now();
        for (; carry >= 1; carry--) {
          const k = next++ % hosts.length;
          const seq = ++seqs[k]!;
          const pane = Math.floor(seq / 7) % PANES;
          // A share of updates changes the state class; the rest change what a reader sees
          // without an edge (tokens), as most real updates do.
          if (Math.random() < share) {
            states[k]![pane] = (states[k]![pane]! + 1) % STATES.length;
            classChanges++;
          }
          const upsert = row(hosts[k]!.host, pane, STATES[states[k]![pane]!]!, `t${now}`, seq);
          sockets[k]!.send(JSON.stringify({ type: 'delta', epoch: EPOCH, seq, server: SERVER, incarnation: 'i1', upserts: [upsert], removals: [] }));
          sent++;
        }
      }, tickMs);
    });
    process.send!({ sent, classChanges, secs: (Date.now() - started) / 1000 });
  });
}

// ---- subscribers and readers (child) ----------------------------------------------------------------

async function subscribers(url: string, token: string): Promise<void> {
  let open: { ws: WebSocket; mode: string }[] = [];
  const lat: Record<string, number[]> = { events: [], changes: [] };
  let messages = 0;
  let bytes = 0;
  let closedEarly = 0;
  const connect = (mode: string) =>
    new Promise<void>((resolve, reject) => {
      const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/v1/subscribe?mode=${mode}`, { headers: { authorization: `Bearer ${token}` } });
      let first = true;
      ws.on('message', (d) => {
        const now = Date.now();
        messages++;
        const s = String(d);
        bytes += s.length;
        if (first) {
          first = false;
          return resolve();
        }
        // Only the first subscriber of a mode samples, so parsing cost does not grow with 50.
        if (open.find((o) => o.mode === mode)?.ws !== ws) return;
        if (mode === 'events') {
          const e = JSON.parse(s) as { repo: string };
          lat.events!.push(now - Number(e.repo.slice(1)));
        } else if (mode === 'changes') {
          const c = JSON.parse(s) as { upserts?: { repo: string }[] };
          for (const u of c.upserts ?? []) lat.changes!.push(now - Number(u.repo.slice(1)));
        }
      });
      ws.on('close', (code) => {
        if (code !== 1000 && code !== 1005) closedEarly++;
      });
      ws.once('error', reject);
      open.push({ ws, mode });
    });
  process.send!({ ready: true });
  process.on('message', async (m: { cmd: string; mix?: Record<string, number> }) => {
    if (m.cmd === 'open') {
      for (const [mode, k] of Object.entries(m.mix!)) for (let i = 0; i < k; i++) await connect(mode);
      lat.events = [];
      lat.changes = [];
      messages = 0;
      bytes = 0;
      closedEarly = 0;
      process.send!({ ok: true });
    } else if (m.cmd === 'agents') {
      const ms: number[] = [];
      for (let i = 0; i < 5; i++) {
        const t = performance.now();
        try {
          const r = await fetch(`${url}/v1/agents`, { headers: { authorization: `Bearer ${token}`, connection: 'close' } });
          await r.arrayBuffer();
          ms.push(performance.now() - t);
        } catch {
          // A loaded machine can lose a request to a socket race; the figure is the ones that completed.
        }
      }
      process.send!({ ms });
    } else if (m.cmd === 'close') {
      const report = {
        events: { n: lat.events!.length, p50: pct(lat.events!, 0.5), p99: pct(lat.events!, 0.99) },
        changes: { n: lat.changes!.length, p50: pct(lat.changes!, 0.5), p99: pct(lat.changes!, 0.99) },
        messages, mb: bytes / 1e6, closedEarly,
      };
      for (const o of open) o.ws.close(1000);
      open = [];
      process.send!(report);
    }
  });
}

// ---- the hub (this process) ---------------------------------------------------------------------------

async function main(): Promise<void> {
  const n = Number(process.argv[2] ?? 1000);
  const secs = Math.min(Number(process.argv[3] ?? 5), 30);
  const share = Number(process.argv[4] ?? 0.1);
  const hosts = Array.from({ length: n }, (_, i) => ({ host: `c${i}`, token: randomBytes(16).toString('hex') }));
  const viewer = randomBytes(16).toString('hex');
  const config: HubConfig = {
    listen: { host: '127.0.0.1', port: 0 }, staleAfterMs: null, lostAfterMs: 86_400_000,
    collectors: hosts, clients: [{ name: 'bench', token: viewer, role: 'viewer' }], ssh: [],
  };
  const hub = await startHub({ config, logger: pino({ level: 'silent' }), subscriberMaxBufferedBytes: 64 * 1024 * 1024 });
  const me = fileURLToPath(import.meta.url);
  const coll = fork(me, ['--collectors'], { stdio: 'inherit' });
  const subs = fork(me, ['--subscribers'], { stdio: 'inherit' });
  await ask(coll, { url: hub.url, hosts, share });
  await ask(subs, { url: hub.url, token: viewer });
  while (hub.store.rows().length < n * PANES) await new Promise((r) => setTimeout(r, 50));
  const rows = hub.store.rows().length;

  // Baseline for /v1/agents: the same rows as plain objects, serialised with nothing else around.
  const plain = hub.store.rows().map((r) => ({ ...r }));
  const stringify: number[] = [];
  for (let i = 0; i < 7; i++) {
    const t = performance.now();
    JSON.stringify({ schema: 1, agents: plain });
    stringify.push(performance.now() - t);
  }
  const baseMs = pct(stringify, 0.5);

  console.log(`hub bench: ${n} collectors × ${PANES} panes = ${rows} rows; ${secs}s per phase; ${Math.round(share * 100)}% of updates change a state class`);
  console.log(`machine: ${(await import('node:os')).cpus().length} cores, shared and loaded; figures are what this run measured`);
  console.log(`baseline: bare JSON.stringify of the ${rows} rows ${baseMs.toFixed(1)} ms`);
  console.log('');
  console.log('hub CPU: share of one core over the phase; ms/1k: hub CPU ms per 1,000 updates applied (load-independent)');
  console.log('/v1/agents: a full read over HTTP from another process; build: the hub assembling it in-process');
  console.log('rate/s  subscribers              applied/s  hub CPU  ms/1k  RSS MB  edge p50/p99 ms  changes p50/p99 ms  /v1/agents ms (×stringify)  build ms (×stringify)  dropped');

  const dropped = () => [...hub.metrics.subscribersDropped.values()].reduce((a, b) => a + b, 0);
  async function phase(rate: number, mix: Record<string, number>): Promise<{ applied: number; cpu: number }> {
    await ask(subs, { cmd: 'open', mix });
    const d0 = dropped();
    const applied0 = hub.metrics.framesApplied;
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    let rss = process.memoryUsage().rss;
    const rssTimer = setInterval(() => (rss = Math.max(rss, process.memoryUsage().rss)), 200);
    const sending = ask(coll, { rate, secs });
    await new Promise((r) => setTimeout(r, (secs * 1000) / 2));
    // The hub's own cost of a full read while updates flow (each after a change, so never cached).
    const build: number[] = [];
    for (let i = 0; i < 5; i++) {
      await new Promise((r) => setTimeout(r, 30));
      const t = performance.now();
      hub.store.documentText();
      build.push(performance.now() - t);
    }
    const agents = (await ask(subs, { cmd: 'agents' })) as { ms: number[] };
    const sent = (await sending) as { sent: number; secs: number };
    const deadline = Date.now() + 3000;
    while (hub.metrics.framesApplied - applied0 < sent.sent && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const wall = (performance.now() - t0) / 1000;
    const c = process.cpuUsage(cpu0);
    clearInterval(rssTimer);
    await new Promise((r) => setTimeout(r, 300));
    const rep = (await ask(subs, { cmd: 'close' })) as {
      events: { n: number; p50: number; p99: number };
      changes: { n: number; p50: number; p99: number };
      closedEarly: number;
    };
    const applied = (hub.metrics.framesApplied - applied0) / wall;
    const cpu = (c.user + c.system) / 1e6 / wall;
    const name = Object.entries(mix).filter(([, k]) => k > 0).map(([m, k]) => `${k} ${m}`).join(' + ') || 'none';
    const lat = (x: { n: number; p50: number; p99: number }) => (x.n ? `${x.p50.toFixed(0)}/${x.p99.toFixed(0)}` : '-');
    const am = pct(agents.ms, 0.5);
    const cpuPerK = ((c.user + c.system) / 1e3 / Math.max(1, hub.metrics.framesApplied - applied0)) * 1000;
    const bm = pct(build, 0.5);
    console.log(
      `${String(rate).padEnd(8)}${name.padEnd(25)}${applied.toFixed(0).padStart(9)}  ${(cpu * 100).toFixed(0).padStart(6)}%  ${cpuPerK.toFixed(0).padStart(8)}  ${(rss / 1e6).toFixed(0).padStart(6)}  ` +
        `${lat(rep.events).padStart(15)}  ${lat(rep.changes).padStart(18)}  ${am.toFixed(1).padStart(9)} (×${(am / baseMs).toFixed(2)})  ${bm.toFixed(1).padStart(7)} (×${(bm / baseMs).toFixed(2)})  ${dropped() - d0 + rep.closedEarly}`,
    );
    return { applied, cpu };
  }

  const mixes: Record<string, number>[] = [{}, { events: 1 }, { changes: 1 }, { documents: 1 }, { events: 50 }, { changes: 50 }, { documents: 10 }];
  for (const mix of mixes) await phase(1000, mix);
  const target = { events: 50, changes: 10 };
  let best = 0;
  for (const rate of [1000, 5000, 10_000, 20_000, 30_000]) {
    const r = await phase(rate, target);
    if (r.applied >= rate * 0.95) best = rate;
  }
  console.log('');
  console.log(`max sustained with 50 events + 10 changes subscribers: ≥ ${best} updates/s (the highest offered rate applied at ≥ 95%)`);
  coll.kill();
  subs.kill();
  await hub.close();
}

if (process.argv.includes('--collectors')) {
  process.once('message', (m: { url: string; hosts: { host: string; token: string }[]; share: number }) => {
    collectors(m.url, m.hosts, m.share).catch((e: unknown) => {
      console.error(e);
      process.exit(1);
    });
  });
  process.on('disconnect', () => process.exit(0));
} else if (process.argv.includes('--subscribers')) {
  process.once('message', (m: { url: string; token: string }) => {
    subscribers(m.url, m.token).catch((e: unknown) => {
      console.error(e);
      process.exit(1);
    });
  });
  process.on('disconnect', () => process.exit(0));
} else {
  main().catch((e: unknown) => {
    console.error(e);
    process.exit(1);
  });
}
