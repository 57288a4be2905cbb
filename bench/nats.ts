// The fleet on NATS against one hub without it, in the same run: 1,000 hosts × 20 panes sending
// 1,000 row updates a second, spread over two hubs that share a real nats-server (Debian's, with
// JetStream, started here on loopback), 50 watchers on each hub (40 events + 10 changes); beside it
// one hub alone with all the hosts and 50 watchers. Figures: edge p50/p99 (send → an events watcher,
// on either hub, so half the edges crossed NATS), each hub's CPU, the NATS server's CPU and memory
// (from /proc), and the share of updates a changes watcher on each hub saw; then rising rates until
// a hub's watchers fall behind (the largest rate delivered at ≥ 95% on every hub). Hubs are real
// `tma hub` processes; the NATS part runs only when this build's `tma hub` takes --nats.
// Then issue 32's goals, as ratios against the lone hub at idle and at each of --goal-rates: CPU
// per hub, idle CPU, edge p99 to a watcher on the other hub (the host linked to one hub, the
// watcher on the other), RSS.
//   npm run build && node dist/bench/nats.js [--hosts=1000] [--secs=8] [--goal-rates=1000,5000] [--rates=2000,5000,10000,20000]

import { fork, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { VERB_FLAGS } from '../cli/verb-table.js';
import { PANES, generator, pct, subscribers, type GeneratorStart } from './hub-load.js';
import { asChild, fail } from './child-role.js';

type Msg = Record<string, unknown>;
const ask = (child: ChildProcess, m: Msg) =>
  new Promise<Msg>((resolve) => {
    child.once('message', (r) => resolve(r as Msg));
    child.send(m);
  });
const flag = (name: string, def: string) => process.argv.find((x) => x.startsWith(`--${name}=`))?.slice(name.length + 3) ?? def;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const me = fileURLToPath(import.meta.url);
const TMA = join(dirname(me), '..', '..', 'bin', 'tma.js');
const PROF = flag('prof', '');

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** CPU seconds (user + system) and resident bytes of a process, from /proc. */
function procUsage(pid: number): { cpuS: number; rss: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return { cpuS: (Number(f[11]) + Number(f[12])) / 100, rss: rss ? Number(rss[1]) * 1024 : 0 };
}

interface Proc {
  child: ChildProcess;
  out: () => string;
}

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv = {}): Proc {
  const child = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => (out = (out + String(d)).slice(-4000)));
  child.stderr.on('data', (d) => (out = (out + String(d)).slice(-4000)));
  return { child, out: () => out };
}

async function startNats(dir: string): Promise<{ url: string; proc: Proc }> {
  const port = await freePort();
  const conf = join(dir, 'nats.conf');
  writeFileSync(conf, `listen: 127.0.0.1:${port}\njetstream { store_dir: ${JSON.stringify(join(dir, 'js'))} }\n`);
  const proc = run('/usr/sbin/nats-server', ['--config', conf]);
  for (let i = 0; i < 200 && !proc.out().includes('Server is ready'); i++) await sleep(50);
  if (!proc.out().includes('Server is ready')) throw new Error(`nats-server did not start: ${proc.out()}`);
  return { url: `nats://127.0.0.1:${port}`, proc };
}

interface Hub {
  url: string;
  proc: Proc;
}

async function startHub(dir: string, name: string, extra: string[]): Promise<Hub> {
  const port = await freePort();
  const d = join(dir, name);
  // --prof=DIR: every hub writes a CPU profile there when it ends (SIGTERM at the bench's end).
  const prof = PROF ? ['--cpu-prof', `--cpu-prof-dir=${PROF}`, `--cpu-prof-name=${name}.cpuprofile`] : [];
  const proc = run(process.execPath, [...prof, TMA, 'hub', '--no-local', '--config', join(dir, 'hub.toml'), '--listen', `127.0.0.1:${port}`, ...extra], {
    XDG_STATE_HOME: join(d, 'state'),
    XDG_CONFIG_HOME: join(d, 'cfg'),
    TMA_LOG_LEVEL: 'warn',
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    const ok = await fetch(`${url}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return { url, proc };
    if (proc.child.exitCode !== null || i > 600) throw new Error(`hub ${name} did not start: ${proc.out()}`);
    await sleep(100);
  }
}

async function rowsSeen(hub: Hub, viewer: string): Promise<number> {
  const r = await fetch(`${hub.url}/v1/agents`, { headers: { authorization: `Bearer ${viewer}` } }).catch(() => null);
  if (r?.status !== 200) return 0;
  return ((await r.json()) as { agents: unknown[] }).agents.length;
}

interface Side {
  name: string;
  hubs: Hub[];
  gens: ChildProcess[];
  subs: ChildProcess[];
  nats: Proc | null;
}

async function main(): Promise<void> {
  const n = Number(flag('hosts', '1000'));
  const secs = Number(flag('secs', '8'));
  const rates = flag('rates', '').split(',').filter(Boolean).map(Number);
  const natsSupported = (VERB_FLAGS.hub as Record<string, unknown>).nats !== undefined;
  const dir = mkdtempSync(join(tmpdir(), 'tma-bench-nats-'));
  const hosts = Array.from({ length: n }, (_, i) => ({ host: `c${i}`, token: randomBytes(16).toString('hex') }));
  const viewer = randomBytes(16).toString('hex');
  const toml = [
    ...hosts.map((h) => `[[collector]]\nhost = "${h.host}"\ntoken = "${h.token}"`),
    `[[client]]\nname = "bench"\ntoken = "${viewer}"\nrole = "viewer"`,
  ].join('\n');
  writeFileSync(join(dir, 'hub.toml'), toml);
  const children: ChildProcess[] = [];
  const procs: Proc[] = [];
  const child = (role: string) => {
    const c = fork(me, [role], { stdio: 'inherit' });
    children.push(c);
    return c;
  };
  const cleanup = () => {
    for (const c of children) c.kill();
    for (const p of procs) p.child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('SIGINT', () => {
    cleanup();
    process.exit(130);
  });

  async function side(name: string, hubCount: number, natsUrl: string | null, nats: Proc | null): Promise<Side> {
    const hubs: Hub[] = [];
    for (let i = 0; i < hubCount; i++) {
      const h = await startHub(dir, `${name}-${i}`, natsUrl ? ['--nats', natsUrl] : []);
      procs.push(h.proc);
      hubs.push(h);
    }
    const gens = hubs.map(() => child('--generator'));
    const subs = hubs.map(() => child('--subscribers'));
    // Hosts are spread over the hubs; each generator links its share to its hub.
    await Promise.all(
      gens.map((g, i) =>
        ask(g, {
          url: hubs[i]!.url,
          hosts: hosts.filter((_, k) => k % hubCount === i),
          share: 0.1,
          // A shipped hub holds 256 links per address: 200 hosts an address.
          localAddresses: Array.from({ length: Math.ceil(n / hubCount / 200) }, (_, a) => `127.0.0.${a + 2}`),
        } satisfies GeneratorStart as unknown as Msg),
      ),
    );
    await Promise.all(subs.map((s, i) => ask(s, { url: hubs[i]!.url, token: viewer })));
    // Every hub serves the whole fleet before the load starts.
    for (const h of hubs) {
      for (let i = 0; (await rowsSeen(h, viewer)) < n * PANES; i++) {
        if (i > 300) throw new Error(`${name}: the rows never all arrived: ${h.proc.out()}`);
        await sleep(200);
      }
    }
    return { name, hubs, gens, subs, nats };
  }

  interface Figures {
    rate: number;
    sent: number;
    /** Per hub, % of one core. */
    cpu: number[];
    natsCpu: number | null;
    rss: number[];
    p99: number;
    /** Edges to a watcher on a hub other than the one the host is linked to. */
    remoteP99: number;
    seen: number[];
  }

  async function phase(s: Side, r: number): Promise<Figures> {
    const batch = Math.min(PANES, Math.max(1, Math.round(r / n)));
    await Promise.all(s.subs.map((p, i) => ask(p, { cmd: 'open', mix: { events: 40, changes: 10 }, spread: { hubs: s.hubs.length, index: i } })));
    const pids = [...s.hubs.map((h) => h.proc.child.pid!), ...(s.nats ? [s.nats.child.pid!] : [])];
    const u0 = pids.map(procUsage);
    const t0 = performance.now();
    const sent =
      r > 0
        ? ((await Promise.all(s.gens.map((g) => ask(g, { rate: r / s.gens.length, secs, batch })))) as unknown as { rows: number }[])
        : (await sleep(secs * 1000), []);
    const wall = (performance.now() - t0) / 1000;
    const u1 = pids.map(procUsage);
    // Late arrivals still count (a loaded machine delays them); the latency figures say how late.
    if (r > 0) await sleep(3000);
    const reps = (await Promise.all(s.subs.map((p) => ask(p, { cmd: 'close' })))) as unknown as {
      events: number[];
      changes: number[];
      remote: number[];
      loopP99: number;
    }[];
    const rows = sent.reduce((a, x) => a + x.rows, 0);
    const ev = reps.flatMap((x) => x.events);
    const remote = reps.flatMap((x) => x.remote);
    // A changes watcher sees each updated row once per flush; at these rates a row changes far less
    // often than a flush, so it should see every update.
    const seen = reps.map((x) => x.changes.length / Math.max(1, rows));
    const cpu = pids.map((_, i) => ((u1[i]!.cpuS - u0[i]!.cpuS) / wall) * 100);
    const f: Figures = {
      rate: r,
      sent: rows / wall,
      cpu: cpu.slice(0, s.hubs.length),
      natsCpu: s.nats ? cpu[s.hubs.length]! : null,
      rss: u1.slice(0, s.hubs.length).map((u) => u.rss),
      p99: pct(ev, 0.99),
      remoteP99: pct(remote, 0.99),
      seen,
    };
    const natsFig = f.natsCpu !== null ? `; nats-server CPU ${f.natsCpu.toFixed(1)}%, RSS ${(u1[s.hubs.length]!.rss / 1e6).toFixed(0)} MB` : '';
    console.log(
      `${s.name.padEnd(22)} ${String(r).padStart(6)} rows/s (${batch} a frame): sent ${f.sent.toFixed(0)}/s; edge p50/p99 ${pct(ev, 0.5).toFixed(0)}/${f.p99.toFixed(0)} ms` +
        (s.hubs.length > 1 ? ` (to the other hub p99 ${f.remoteP99.toFixed(0)} ms)` : '') +
        `; hub CPU ${f.cpu.map((c) => `${c.toFixed(1)}%`).join(' + ')}, RSS ${f.rss.map((x) => `${(x / 1e6).toFixed(0)} MB`).join(' + ')}${natsFig}; ` +
        `changes seen ${seen.map((x) => `${(x * 100).toFixed(0)}%`).join(', ')}; watchers' own loop p99 ${Math.max(...reps.map((x) => x.loopP99)).toFixed(0)} ms`,
    );
    return f;
  }

  async function ramp(s: Side): Promise<number> {
    let best = 0;
    for (const r of rates) {
      const f = await phase(s, r);
      if (!(f.seen.every((x) => x >= 0.95) && f.sent >= r * 0.95)) break;
      best = r;
    }
    return best;
  }

  /** Issue 32's goals, each as a ratio against the lone hub of the same run. */
  function verdict(alone: Figures[], nats: Figures[]): void {
    const avg = (xs: number[]) => xs.reduce((a, x) => a + x, 0) / Math.max(1, xs.length);
    const row = (what: string, fig: string, ok: boolean) => console.log(`  ${ok ? 'met ' : 'MISS'} ${what.padEnd(44)} ${fig}`);
    console.log('goals (issue 32), NATS hub against the lone hub in this run:');
    for (let i = 0; i < alone.length; i++) {
      const a = alone[i]!;
      const b = nats[i]!;
      const per = avg(b.cpu);
      if (a.rate === 0) {
        row('idle CPU per hub ≤ 2% of a core', `${b.cpu.map((c) => c.toFixed(2)).join(' / ')}% (lone hub ${a.cpu[0]!.toFixed(2)}%)`, Math.max(...b.cpu) <= 2);
        continue;
      }
      const ratio = per / a.cpu[0]!;
      row(`CPU per hub at ${a.rate} rows/s ≤ 1.3×`, `${ratio.toFixed(2)}× (${per.toFixed(1)}% against ${a.cpu[0]!.toFixed(1)}%)`, ratio <= 1.3);
      row(`edge p99 to the other hub at ${a.rate} rows/s`, `${b.remoteP99.toFixed(0)} ms (lone hub p99 ${a.p99.toFixed(0)} ms)`, b.remoteP99 <= 250);
      const rss = avg(b.rss) / a.rss[0]!;
      row(
        `RSS per hub at ${a.rate} rows/s ≤ 1.3×`,
        `${rss.toFixed(2)}× (${(avg(b.rss) / 1e6).toFixed(0)} MB against ${(a.rss[0]! / 1e6).toFixed(0)} MB)`,
        rss <= 1.3,
      );
    }
  }

  try {
    console.log(`bench nats: ${n} hosts × ${PANES} panes; ${secs}s a phase; 40 events + 10 changes watchers on each hub; 10% of updates change a state class`);
    const alone = await side('one hub, no NATS', 1, null, null);
    let natsSide: Side | null = null;
    if (natsSupported) {
      const nats = await startNats(dir);
      procs.push(nats.proc);
      natsSide = await side('two hubs on NATS', 2, nats.url, nats.proc);
    } else {
      console.log('NATS part not run: this build of `tma hub` has no --nats (the baseline runs alone)');
    }
    // Phases interleaved, the lone hub first at each rate, so both see the same machine.
    const goalRates = [0, ...flag('goal-rates', '1000,5000').split(',').filter(Boolean).map(Number)];
    const figAlone: Figures[] = [];
    const figNats: Figures[] = [];
    for (const r of goalRates) {
      figAlone.push(await phase(alone, r));
      if (natsSide) figNats.push(await phase(natsSide, r));
    }
    if (natsSide) verdict(figAlone, figNats);
    if (rates.length > 0) {
      console.log('rising rates:');
      const bestAlone = await ramp(alone);
      const bestNats = natsSide ? await ramp(natsSide) : null;
      console.log(
        `largest sustained (every hub's changes watcher saw ≥ 95%): one hub ${bestAlone ? `≥ ${bestAlone}` : `< ${rates[0]}`} rows/s` +
          (bestNats === null ? '' : `; two hubs on NATS ${bestNats ? `≥ ${bestNats}` : `< ${rates[0]}`} rows/s`),
      );
    }
  } finally {
    if (PROF) {
      // A profile is written on a clean exit only: the hubs are asked to end, and given time.
      const hubProcs = procs.filter((p) => p.child.spawnargs.includes('hub'));
      for (const p of hubProcs) p.child.kill('SIGTERM');
      await Promise.all(
        hubProcs.filter((p) => p.child.exitCode === null).map((p) => Promise.race([new Promise((r) => p.child.once('exit', r)), sleep(10_000)])),
      );
    }
    cleanup();
  }
}

const role = process.argv[2];
if (role === '--generator') {
  asChild<GeneratorStart>(generator);
} else if (role === '--subscribers') {
  asChild<{ url: string; token: string }>((m) => subscribers(m.url, m.token));
} else {
  main().then(() => process.exit(0), fail);
}
