// Hub throughput and cost, each printed beside a baseline measured in the same run.
// Build first, then run:  npm run build && node --expose-gc dist/bench/hub.js [collectors=1000] [updates/s per collector=1] [secs=10]
// A child process plays the collectors over real WebSockets on 127.0.0.1, so the hub's RSS is its
// own. Bounded in time and count; not part of any test run.

import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { WebSocket } from 'ws';
import type { HubConfig } from '../hub/config.js';
import { startHub } from '../hub/server.js';
import { protocolRowObject, type ProtocolRow } from '../shared/row.js';

const PANES = 20;
const EPOCH = 'b3c4d5e6f708192a';
const SERVER = '/tmp/tmux-1000/default';

function row(host: string, i: number, state: ProtocolRow['state']): ProtocolRow {
  return protocolRowObject({
    pane: `%${i}`, agent: 'claude', state, detail: null, since: 1_700_000_000_000, since_ms: 1_700_000_000_000,
    episode_ms: 1_700_000_000_000, locator: `work:${i}.0`, attention: false, done: false, session: null,
    transcript: null, permission_request: null, stamped_at_ms: 1_700_000_000_000, context: 42, context_at_ms: null,
    muted: false, tokens: 12345, quota: null, cost_usd: 0.5, repo: 'fleet', branch: 'main', worktree: false,
    pending_tool: null, pending_call: null, pending_summary: null, server: SERVER, host,
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function timeIt(fn: () => void, runs: number): number {
  const ms: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = process.hrtime.bigint();
    fn();
    ms.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  return median(ms);
}

// ---- the collectors' side (child process) ----------------------------------------------------

async function runCollectors(url: string, hosts: { host: string; token: string }[], rate: number, secs: number): Promise<void> {
  let sent = 0;
  const sockets: WebSocket[] = [];
  await Promise.all(
    hosts.map(
      ({ host, token }) =>
        new Promise<void>((resolve, reject) => {
          const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/v1/collect`, { headers: { authorization: `Bearer ${token}` } });
          sockets.push(ws);
          ws.once('error', reject);
          ws.on('message', (d) => {
            if ((JSON.parse(String(d)) as { type: string }).type !== 'welcome') return;
            const rows = Array.from({ length: PANES }, (_, i) => row(host, i, 'working'));
            ws.send(JSON.stringify({ type: 'snapshot', epoch: EPOCH, seq: 0, complete: true, servers: [{ server: SERVER, incarnation: 'i1', rows }] }));
            resolve();
          });
          ws.once('open', () =>
            ws.send(JSON.stringify({ type: 'hello', protocol: 1, host, collector_version: 'bench', epoch: EPOCH, actions_allowed: [] })),
          );
        }),
    ),
  );
  process.send!({ ready: true });
  await new Promise<void>((resolve) => process.once('message', () => resolve()));
  const seqs = new Array<number>(hosts.length).fill(0);
  const started = Date.now();
  // Each tick sends one delta from a slice of the collectors so the offered rate is smooth.
  const tickMs = 10;
  const perTick = (hosts.length * rate * tickMs) / 1000;
  let carry = 0;
  let next = 0;
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      if (Date.now() - started >= secs * 1000) {
        clearInterval(timer);
        resolve();
        return;
      }
      carry += perTick;
      for (; carry >= 1; carry--) {
        const k = next++ % hosts.length;
        const seq = ++seqs[k]!;
        const pane = seq % PANES;
        const upsert = row(hosts[k]!.host, pane, seq % 3 === 0 ? 'blocked' : seq % 3 === 1 ? 'idle' : 'working');
        sockets[k]!.send(JSON.stringify({ type: 'delta', epoch: EPOCH, seq, server: SERVER, incarnation: 'i1', upserts: [upsert], removals: [] }));
        sent++;
      }
    }, tickMs);
  });
  process.send!({ sent, secs: (Date.now() - started) / 1000 });
  for (const ws of sockets) ws.close();
}

// ---- the hub's side (parent process) -----------------------------------------------------------

async function main(): Promise<void> {
  const n = Number(process.argv[2] ?? 1000);
  const rate = Number(process.argv[3] ?? 1);
  const secs = Math.min(Number(process.argv[4] ?? 10), 60);
  const hosts = Array.from({ length: n }, (_, i) => ({ host: `c${i}`, token: randomBytes(16).toString('hex') }));
  const viewer = randomBytes(16).toString('hex');
  const config: HubConfig = {
    listen: { host: '127.0.0.1', port: 0 }, staleAfterMs: null, lostAfterMs: 86_400_000,
    collectors: hosts, clients: [{ name: 'bench', token: viewer, role: 'viewer' }], ssh: [],
  };

  // The hub is measured first, on a fresh process, so freed baseline pages cannot hide its growth.
  global.gc?.();
  const rss0 = process.memoryUsage().rss;
  const hubHeap0 = process.memoryUsage().heapUsed;
  const hub = await startHub({ config, logger: pino({ level: 'silent' }) });
  const child = fork(fileURLToPath(import.meta.url), ['--collectors'], { stdio: 'inherit' });
  child.send({ url: hub.url, hosts, rate, secs });
  await new Promise<void>((resolve) => child.once('message', () => resolve()));
  while (hub.store.rows().length < n * PANES) await new Promise((r) => setTimeout(r, 50));
  global.gc?.();
  const rssPerHost = (process.memoryUsage().rss - rss0) / n;
  const heapPerHost = (process.memoryUsage().heapUsed - hubHeap0) / n;

  const rows = hub.store.rows().length;
  const agentsMs: number[] = [];
  for (let i = 0; i < 15; i++) {
    const t = process.hrtime.bigint();
    const r = await fetch(`${hub.url}/v1/agents`, { headers: { authorization: `Bearer ${viewer}` } });
    await r.arrayBuffer();
    agentsMs.push(Number(process.hrtime.bigint() - t) / 1e6);
  }

  const applied0 = hub.metrics.framesApplied;
  const t0 = Date.now();
  child.send({ go: true });
  const report = await new Promise<{ sent: number; secs: number }>((resolve) => child.once('message', (m) => resolve(m as never)));
  // Let the hub finish what is in flight, bounded.
  const deadline = Date.now() + 5000;
  while (hub.metrics.framesApplied - applied0 < report.sent && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  const applied = hub.metrics.framesApplied - applied0;
  const wall = (Date.now() - t0) / 1000;

  // Baselines: the same rows held as plain objects, and serialised with nothing else around.
  global.gc?.();
  const heap0 = process.memoryUsage().heapUsed;
  const plain = hosts.flatMap(({ host }) => Array.from({ length: PANES }, (_, i) => row(host, i, 'working')));
  const plainPerHost = (process.memoryUsage().heapUsed - heap0) / n;
  const baselineStringifyMs = timeIt(() => JSON.stringify({ schema: 1, agents: plain }), 15);

  const pad = (s: string) => s.padEnd(36);
  console.log(`hub bench: ${n} collectors × ${PANES} panes = ${rows} rows, offered ${n * rate} updates/s for ${secs}s`);
  console.log(`${pad('sustained updates/s')}${(applied / wall).toFixed(0)}  (baseline: offered ${(report.sent / report.secs).toFixed(0)}/s; applied ${applied}/${report.sent})`);
  console.log(`${pad(`/v1/agents latency at ${rows} rows`)}${median(agentsMs).toFixed(1)} ms  (baseline: bare JSON.stringify ${baselineStringifyMs.toFixed(1)} ms, ×${(median(agentsMs) / baselineStringifyMs).toFixed(1)})`);
  console.log(`${pad('hub RSS per host')}${(rssPerHost / 1024).toFixed(1)} KiB  (heap ${(heapPerHost / 1024).toFixed(1)} KiB; baseline: ${PANES} plain row objects ${(plainPerHost / 1024).toFixed(1)} KiB, RSS ×${(rssPerHost / plainPerHost).toFixed(1)})`);
  if (!global.gc) console.log('(run with node --expose-gc for steadier memory figures)');
  child.kill();
  await hub.close();
}

if (process.argv.includes('--collectors')) {
  process.once('message', (m: { url: string; hosts: { host: string; token: string }[]; rate: number; secs: number }) => {
    runCollectors(m.url, m.hosts, m.rate, m.secs).then(
      () => process.exit(0),
      (e: unknown) => {
        console.error(e);
        process.exit(1);
      },
    );
  });
} else {
  main().catch((e: unknown) => {
    console.error(e);
    process.exit(1);
  });
}
