// Hub throughput, memory and read latency while people watch it, each figure beside a baseline
// from the same run. Build first, then run:
//   npm run build && node --expose-gc dist/bench/hub.js [--short] [--collectors=1000] [--secs=5] [--gens=3] [--batch=N] [--share=0.1] [--rates=5000,…] [--reads=3]
// This process runs only the hub, so its CPU and RSS are the hub's. `--gens` child processes play
// the collectors over real WebSockets (bench/hub-load.ts), two more hold the subscribers (nothing
// heavy runs beside the latency samplers), and one more reads `/v1/agents` over HTTP with a lean
// node:http client and with curl, beside the same bytes from a bare server (bench/hub-reader.ts).
// Beside each edge figure: the hub's own event-loop delay, its flush times and GC pauses, and the
// samplers' event-loop delay, so a late edge can be told apart as the hub's or the reader's. Each row update carries its send time in `repo`, so a subscriber measures
// send → edge on one clock. Rates count rows. Rows of one host share a delta frame as a collector's
// cycle sends them: by default each host sends about one frame a second (rate ÷ hosts rows, 1–20);
// `--batch=N` fixes the rows per frame instead.
// Phases: the target mix (50 events + 10 changes) at 1,000 rows/s first, so its RSS is not inflated
// by the phases after it; then 0, 1 and 50 subscribers of each mode (10 for documents) at 1,000/s;
// then the target mix at rising rates. `--short` runs the target mix at 1k and 20k only;
// `--costs-only` only the in-process costs.

import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpus } from 'node:os';
import { PerformanceObserver, constants as perfConstants, monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import type { HubConfig } from '../hub/config/config.js';
import { startHub } from '../hub/server.js';
import { StreamHub } from '../hub/http/streams.js';
import { hubCosts } from './hub-costs.js';
import { PANES, generator, pct, subscribers, type GeneratorStart } from './hub-load.js';
import { bareServer, reader, type AgentsReport } from './hub-reader.js';
import { asChild, fail } from './child-role.js';

type Msg = Record<string, unknown>;
const ask = (child: ChildProcess, m: Msg) =>
  new Promise<Msg>((resolve) => {
    child.once('message', (r) => resolve(r as Msg));
    child.send(m);
  });

function flag(name: string, def: number): number {
  const a = process.argv.find((x) => x.startsWith(`--${name}=`));
  return a ? Number(a.slice(name.length + 3)) : def;
}

const mb = (n: number) => (n / 1e6).toFixed(0);

function memory(): { rss: number; heap: number; external: number; buffers: number } {
  (globalThis as { gc?: () => void }).gc?.();
  const m = process.memoryUsage();
  return { rss: m.rss, heap: m.heapUsed, external: m.external, buffers: m.arrayBuffers };
}

async function main(): Promise<void> {
  const short = process.argv.includes('--short');
  const n = flag('collectors', 1000);
  const secs = Math.min(flag('secs', short ? 4 : 5), 30);
  const gens = Math.max(1, flag('gens', 3));
  const fixedBatch = flag('batch', 0);
  const batchAt = (rate: number) => Math.min(PANES, Math.max(1, fixedBatch || Math.round(rate / n)));
  const share = flag('share', 0.1);
  const reads = flag('reads', 3);
  const hosts = Array.from({ length: n }, (_, i) => ({ host: `c${i}`, token: randomBytes(16).toString('hex') }));
  const viewer = randomBytes(16).toString('hex');
  const config: HubConfig = {
    listen: { host: '127.0.0.1', port: 0 },
    staleAfterMs: null,
    lostAfterMs: 86_400_000,
    collectors: hosts,
    clients: [{ name: 'bench', token: viewer, role: 'viewer' }],
    ssh: [],
  };
  // The in-process costs run in a process of their own, so the hub's memory figures start clean.
  console.log('in-process costs (CPU time, each beside its baseline):');
  await new Promise((resolve) =>
    fork(fileURLToPath(import.meta.url), ['--costs', String(n), String(fixedBatch || 5), String(share)], { stdio: 'inherit', execArgv: ['--expose-gc'] }).once(
      'exit',
      resolve,
    ),
  );
  console.log('');
  if (process.argv.includes('--costs-only')) return;
  const memEmpty = memory();
  // Every simulated collector connects from loopback: lift the per-address cap that guards a real hub.
  const hub = await startHub({ config, logger: pino({ level: 'silent' }), connectionLimits: { perAddress: 4 * n, total: 4 * n + 256 } });
  const me = fileURLToPath(import.meta.url);
  const children: ChildProcess[] = [];
  const spawn = (role: string) => {
    const c = fork(me, [role], { stdio: 'inherit', execArgv: [] });
    children.push(c);
    return c;
  };
  const genProcs = Array.from({ length: gens }, () => spawn('--generator'));
  const subProcs = [spawn('--subscribers'), spawn('--subscribers')];
  const readerProc = spawn('--reader');
  await Promise.all(
    genProcs.map((g, i) => ask(g, { url: hub.url, hosts: hosts.filter((_, k) => k % gens === i), share } satisfies GeneratorStart as unknown as Msg)),
  );
  await Promise.all([...subProcs, readerProc].map((s) => ask(s, { url: hub.url, token: viewer })));
  // The reader turns the warming of the store's pieces off and on between its reads, to time the
  // way reads went before (every host changed since the last read encoded by the read) beside now.
  // eslint-disable-next-line @typescript-eslint/unbound-method -- put back on the store below, where `this` is the store again
  const warmer = hub.store.prepare;
  readerProc.on('message', (m: { warming?: boolean }) => {
    if (m.warming === undefined) return;
    hub.store.prepare = m.warming ? warmer : () => 0;
    readerProc.send({ warmingAck: m.warming });
  });
  const askReader = (m: Msg) =>
    new Promise<AgentsReport>((resolve) => {
      const got = (r: Msg): void => {
        if (!('lean' in r)) return;
        readerProc.off('message', got);
        resolve(r as unknown as AgentsReport);
      };
      readerProc.on('message', got);
      readerProc.send(m);
    });
  // The hub's own view of the phase: event-loop delay, each flush's synchronous time, GC pauses.
  const loop = monitorEventLoopDelay({ resolution: 5 });
  loop.enable();
  let flushMs: number[] = [];
  let flushCpuMs: number[] = [];
  const proto = StreamHub.prototype as unknown as { flush: () => void };
  const flushWork = proto.flush;
  proto.flush = function timedFlush(this: unknown) {
    const t = performance.now();
    const c = process.cpuUsage();
    flushWork.call(this);
    flushMs.push(performance.now() - t);
    const d = process.cpuUsage(c);
    flushCpuMs.push((d.user + d.system) / 1000);
  };
  let gcMs: number[] = [];
  let majorGcMs: number[] = [];
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      gcMs.push(e.duration);
      if ((e as unknown as { detail?: { kind?: number } }).detail?.kind === perfConstants.NODE_PERFORMANCE_GC_MAJOR) majorGcMs.push(e.duration);
    }
  }).observe({ entryTypes: ['gc'] });
  while (hub.store.hostMetrics().reduce((a, h) => a + h.rows, 0) < n * PANES) await new Promise((r) => setTimeout(r, 50));
  const rows = n * PANES;
  const memLoaded = memory();

  console.log(
    `hub bench: ${n} collectors × ${PANES} panes = ${rows} rows; ${secs}s per phase (${reads > 0 ? Math.max(secs, Math.ceil(secs / 5 + reads * 1.8)) : secs}s where ${reads} rounds of reads go on); ${gens} generator processes; ${fixedBatch ? `${fixedBatch} rows a delta frame` : 'rows a frame = rate ÷ hosts (1–20)'}; ${Math.round(share * 100)}% of updates change a state class`,
  );
  console.log(
    `machine: ${cpus().length} cores, shared; load average at start ${(await import('node:os'))
      .loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')}`,
  );
  console.log(
    `hub memory after gc: empty hub rss ${mb(memEmpty.rss)} MB heap ${mb(memEmpty.heap)} MB; ${rows} rows loaded rss ${mb(memLoaded.rss)} MB heap ${mb(memLoaded.heap)} MB external ${mb(memLoaded.external)} MB (buffers ${mb(memLoaded.buffers)} MB)`,
  );
  console.log('');
  console.log(
    'offered/sent/applied: rows per second (asked of the generators, sent by them, applied by the hub); hub CPU: share of one core; ms/1k: hub CPU ms per 1,000 rows applied (load-independent)',
  );
  console.log("RSS: the phase's peak; heap/ext: V8 heap committed and memory outside it (buffers, sockets) at that peak");
  console.log("edge/changes: send → arrival at one sampling stream per mode and process; hub loop: the hub's event-loop delay p99/max ms over the phase;");
  console.log(
    "  flush: the hub's synchronous time per stream flush p99/max ms (count); gc: the hub's GC pauses total/max ms, and its mark-compacts; samplers loop: the subscriber processes' event-loop delay p99/max ms",
  );
  console.log("/v1/agents: full reads over HTTP while updates flow, from a process of their own: lean = node:http counting bytes, curl = curl's time_total;");
  console.log(
    "  each round reads with curl twice, 250 ms into updates with the store's pieces warmed (the hub now) and not (before), in alternating order; first byte: curl's time_starttransfer;",
  );
  console.log(
    '  stringify: a bare JSON.stringify of the same rows; floor: the same bytes from a bare node:http server in another process (lean/curl), the loopback and client floor',
  );
  console.log(
    'offered    sent  subscribers              applied  hub CPU  ms/1k  RSS MB  heap/ext MB  edge p50/p99 ms  changes p50/p99 ms  hub loop p99/max  dropped',
  );

  const dropped = () => [...hub.metrics.subscribersDropped.values()].reduce((a, b) => a + b, 0);
  async function phase(rate: number, mix: Record<string, number>): Promise<{ applied: number }> {
    // Split each mode's subscribers over the two processes.
    const half = (k: number, i: number) => (i === 0 ? Math.ceil(k / 2) : Math.floor(k / 2));
    await Promise.all(subProcs.map((s, i) => ask(s, { cmd: 'open', mix: Object.fromEntries(Object.entries(mix).map(([m, k]) => [m, half(k, i)])) })));
    const d0 = dropped();
    loop.reset();
    flushMs = [];
    flushCpuMs = [];
    gcMs = [];
    majorGcMs = [];
    const applied0 = hub.metrics.framesApplied;
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    // Peak RSS, and where it was at that moment: V8 heap (committed) and memory outside it.
    let peak = process.memoryUsage();
    const rssTimer = setInterval(() => {
      if (process.memoryUsage.rss() > peak.rss) peak = process.memoryUsage();
    }, 100);
    const batch = batchAt(rate);
    // Updates go on until the reads are done: every read is one taken while they flow. A round
    // (lean read, two curl reads each 250 ms into updates, the floors) takes about 1.5 s.
    const len = reads > 0 ? Math.max(secs, Math.ceil(secs / 5 + reads * 1.8)) : secs;
    const sending = Promise.all(genProcs.map((g) => ask(g, { rate: rate / gens, secs: len, batch })));
    await new Promise((r) => setTimeout(r, (secs * 1000) / 5));
    // Reads go on while updates flow; the rate and CPU are taken over the sending window only.
    const reading = askReader({ cmd: 'agents', rounds: reads });
    const sent = (await sending) as unknown as { rows: number; secs: number }[];
    const sendingEnded = Date.now();
    const sentFrames = sent.reduce((a, s) => a + s.rows / batch, 0);
    const deadline = Date.now() + 3000;
    while (hub.metrics.framesApplied - applied0 < sentFrames && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const wall = (performance.now() - t0) / 1000;
    const c = process.cpuUsage(cpu0);
    const agents = await reading;
    const hubLoop = `${(loop.percentile(99) / 1e6).toFixed(0)}/${(loop.max / 1e6).toFixed(0)}`;
    const flushes = [...flushMs];
    const flushCpu = [...flushCpuMs];
    const gcs = [...gcMs];
    const majors = [...majorGcMs];
    clearInterval(rssTimer);
    await new Promise((r) => setTimeout(r, 300));
    const reps = (await Promise.all(subProcs.map((s) => ask(s, { cmd: 'close' })))) as unknown as {
      events: number[];
      changes: number[];
      closedEarly: number;
      loopP99: number;
      loopMax: number;
    }[];
    const ev = reps.flatMap((r) => r.events);
    const ch = reps.flatMap((r) => r.changes);
    const appliedRows = (hub.metrics.framesApplied - applied0) * batch;
    const applied = appliedRows / wall;
    const cpu = (c.user + c.system) / 1e6 / wall;
    const name =
      Object.entries(mix)
        .filter(([, k]) => k > 0)
        .map(([m, k]) => `${k} ${m}`)
        .join(' + ') || 'none';
    const lat = (x: number[]) => (x.length ? `${pct(x, 0.5).toFixed(0)}/${pct(x, 0.99).toFixed(0)}` : '-');
    const cpuPerK = ((c.user + c.system) / 1e3 / Math.max(1, appliedRows)) * 1000;
    const f = (x: number) => (Number.isFinite(x) ? x.toFixed(0) : '-');
    console.log(
      `${String(rate).padEnd(9)}${(sent.reduce((a, x) => a + x.rows, 0) / len).toFixed(0).padStart(6)}  ${name.padEnd(25)}${applied.toFixed(0).padStart(7)}  ${(cpu * 100).toFixed(0).padStart(6)}%  ${cpuPerK.toFixed(0).padStart(5)}  ${mb(peak.rss).padStart(6)}  ${`${mb(peak.heapTotal)}/${mb(peak.external)}`.padStart(11)}  ` +
        `${lat(ev).padStart(15)}  ${lat(ch).padStart(18)}  ${hubLoop.padStart(16)}  ${Math.max(
          dropped() - d0,
          reps.reduce((a, r) => a + r.closedEarly, 0),
        )}`,
    );
    const p50 = (x: number[]) => pct(x, 0.5);
    const lean = p50(agents.lean);
    console.log(
      `         flush p99/max ${f(pct(flushes, 0.99))}/${f(Math.max(...flushes))} ms wall, ${f(pct(flushCpu, 0.99))}/${f(Math.max(...flushCpu))} ms CPU (${flushes.length} flushes, the longest is no. ${flushes.indexOf(Math.max(...flushes)) + 1}); gc ${f(gcs.reduce((a, b) => a + b, 0))}/${f(Math.max(...gcs))} ms, ${majors.length} major (max ${f(Math.max(...majors))} ms); ` +
        `samplers loop p99/max ${f(Math.max(...reps.map((r) => r.loopP99)))}/${f(Math.max(...reps.map((r) => r.loopMax)))} ms`,
    );
    if (reads === 0) return { applied };
    console.log(
      `         /v1/agents (${(agents.bytes / 1e6).toFixed(1)} MB, median of ${agents.lean.length}): lean ${lean.toFixed(0)} ms, curl ${p50(agents.curl).toFixed(0)} ms [${agents.curl.map(f).join(' ')}], first byte ${p50(agents.curlFirst).toFixed(0)} ` +
        `(warming off, every host changed since the last read encoded by the read as before: curl ${p50(agents.curlOld).toFixed(0)} ms [${agents.curlOld.map(f).join(' ')}], first byte ${p50(agents.curlOldFirst).toFixed(0)}); ` +
        `stringify ${p50(agents.stringify).toFixed(0)} ms (lean ×${(lean / p50(agents.stringify)).toFixed(2)}); ` +
        `floor lean ${p50(agents.floorLean).toFixed(0)} ms (×${(lean / p50(agents.floorLean)).toFixed(2)}), floor curl ${p50(agents.floorCurl).toFixed(0)} ms (curl ×${(p50(agents.curl) / p50(agents.floorCurl)).toFixed(2)})` +
        (agents.failed ? `; ${agents.failed} failed` : '') +
        (agents.endedAt > sendingEnded ? `; the reads ended ${agents.endedAt - sendingEnded} ms after the updates stopped` : ''),
    );
    return { applied };
  }

  const target = { events: 50, changes: 10 };
  await phase(1000, target);
  if (!short) {
    const mixes: Record<string, number>[] = [{}, { events: 1 }, { changes: 1 }, { documents: 1 }, { events: 50 }, { changes: 50 }, { documents: 10 }];
    for (const mix of mixes) await phase(1000, mix);
  }
  let best = 0;
  const ratesArg = process.argv.find((a) => a.startsWith('--rates='));
  const rates = ratesArg ? ratesArg.slice(8).split(',').filter(Boolean).map(Number) : short ? [20_000] : [5000, 10_000, 20_000, 30_000, 40_000];
  for (const rate of rates) {
    const r = await phase(rate, target);
    if (r.applied >= rate * 0.95) best = rate;
  }
  const memEnd = memory();
  console.log('');
  console.log(`max sustained with 50 events + 10 changes subscribers: ≥ ${best} rows/s (the highest offered rate applied at ≥ 95%)`);
  console.log(`hub memory after gc at the end: rss ${mb(memEnd.rss)} MB heap ${mb(memEnd.heap)} MB external ${mb(memEnd.external)} MB`);
  for (const c of children) c.kill();
  await hub.close();
}

const role = process.argv[2];
if (role === '--costs') {
  hubCosts(Number(process.argv[3]), Number(process.argv[4]), Number(process.argv[5]));
} else if (role === '--generator') {
  asChild<GeneratorStart>(generator);
} else if (role === '--reader') {
  asChild<{ url: string; token: string }>((m) => reader(fileURLToPath(import.meta.url), m.url, m.token));
} else if (role === '--bare') {
  bareServer(process.argv[3]!);
} else if (role === '--subscribers') {
  asChild<{ url: string; token: string }>((m) => subscribers(m.url, m.token));
} else {
  main().catch(fail);
}
