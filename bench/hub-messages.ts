// A hub's cost per message, not per row: N hosts each sending one single-row delta per message (a
// fleet of small hosts with one update a second each), at 1k, 2k and 5k messages a second, with
// 50 events + 10 changes watchers subscribed. Each hub runs in a process of its own, so its CPU is
// its own; with --before=PATH (dist/hub/server.js of another build, e.g. a worktree of the base
// commit) the same load runs against that hub too, phase by phase in alternation, so the two sit
// side by side from one run on one (shared) machine. Build first, then run:
//   npm run build && node dist/bench/hub-messages.js [--hosts=1000] [--secs=6] [--rates=1000,2000,5000] [--before=PATH] [--prof=DIR] [--read]
// --read: one GET /v1/agents before each phase, so the hub keeps its document encoded meanwhile.
// --prof=DIR writes a V8 CPU profile of this build's hub over each phase's sending window into DIR.

import { fork, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { randomBytes } from 'node:crypto';
import { join, dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { pino } from 'pino';
import type { HubConfig } from '../hub/config/config.js';
import { generator, pct, subscribers, type GeneratorStart } from './hub-load.js';
import { asChild, fail } from './child-role.js';

type Msg = Record<string, unknown>;
const ask = (child: ChildProcess, m: Msg) =>
  new Promise<Msg>((resolve) => {
    child.once('message', (r) => resolve(r as Msg));
    child.send(m);
  });

function flag(name: string, def: string): string {
  const a = process.argv.find((x) => x.startsWith(`--${name}=`));
  return a ? a.slice(name.length + 3) : def;
}

const me = fileURLToPath(import.meta.url);
const HERE_SERVER = join(dirname(me), '..', 'hub', 'server.js');

interface HubStart {
  module: string;
  config: HubConfig;
  hosts: number;
}

let inspector: Session | null = null;

/** A V8 CPU profile of the sending window only (node --cpu-prof would take in the set-up too). */
async function profileStart(): Promise<void> {
  inspector = new Session();
  inspector.connect();
  await inspector.post('Profiler.enable');
  await inspector.post('Profiler.start');
}

async function profileStop(file: string): Promise<void> {
  const { profile } = await inspector!.post('Profiler.stop');
  writeFileSync(file, JSON.stringify(profile));
  inspector!.disconnect();
  inspector = null;
}

/** A hub alone in this process: answers with its URL, then with its CPU and applied frames when asked. */
async function hubChild(o: HubStart): Promise<void> {
  const { startHub } = (await import(pathToFileURL(o.module).href)) as typeof import('../hub/server.js');
  const hub = await startHub({ config: o.config, logger: pino({ level: 'silent' }), connectionLimits: { perAddress: 4 * o.hosts, total: 4 * o.hosts + 256 } });
  process.send!({ url: hub.url });
  process.on('message', (m: { cmd: string }) => {
    if (m.cmd === 'stats') {
      const c = process.cpuUsage();
      const rows = hub.store.hostMetrics().reduce((a, h) => a + h.rows, 0);
      process.send!({ cpuMs: (c.user + c.system) / 1000, applied: hub.metrics.framesApplied, rows, at: performance.now() });
    } else if (m.cmd === 'prof-start') {
      void profileStart().then(() => process.send!({ ok: true }));
    } else if (m.cmd === 'prof-stop') {
      void profileStop((m as unknown as { file: string }).file).then(() => process.send!({ ok: true }));
    } else if (m.cmd === 'close') {
      // A CPU profile is written on a normal exit only.
      void hub.close().then(() => {
        process.send!({ closed: true }, () => process.exit(0));
      });
    }
  });
}

interface Side {
  name: string;
  url: string;
  hub: ChildProcess;
  gens: ChildProcess[];
  subs: ChildProcess[];
}

async function main(): Promise<void> {
  const n = Number(flag('hosts', '1000'));
  const secs = Number(flag('secs', '6'));
  const rates = flag('rates', '1000,2000,5000').split(',').map(Number);
  const before = flag('before', '');
  const prof = flag('prof', '');
  const readFirst = process.argv.includes('--read');
  const gens = 2;
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
  const children: ChildProcess[] = [];
  const spawn = (role: string, execArgv: string[] = []) => {
    const c = fork(me, [role], { stdio: 'inherit', execArgv });
    children.push(c);
    return c;
  };
  const side = async (name: string, module: string, execArgv: string[]): Promise<Side> => {
    const hub = spawn('--hub', execArgv);
    const { url } = (await ask(hub, { module, config, hosts: n } satisfies HubStart)) as { url: string };
    const g = Array.from({ length: gens }, () => spawn('--generator'));
    const s = [spawn('--subscribers'), spawn('--subscribers')];
    await Promise.all(g.map((p, i) => ask(p, { url, hosts: hosts.filter((_, k) => k % gens === i), share: 0.1 } satisfies GeneratorStart as unknown as Msg)));
    await Promise.all(s.map((p) => ask(p, { url, token: viewer })));
    for (;;) {
      const st = (await ask(hub, { cmd: 'stats' })) as { rows: number };
      if (st.rows >= n * 20) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    return { name, url, hub, gens: g, subs: s };
  };
  const sides: Side[] = [];
  if (before) sides.push(await side('before', before, []));
  sides.push(await side(before ? 'after' : 'this build', HERE_SERVER, []));

  console.log(
    `hub cost per message: ${n} hosts, one row per delta message, 10% of updates change a state class; 50 events + 10 changes watchers; ${secs}s a phase${readFirst ? '; a full read before each phase (document warming on)' : ''}`,
  );
  console.log('hub CPU: share of one core over the sending window; µs/msg: hub CPU per message applied; edge: send → an events watcher, p50/p99 ms');
  console.log('side         msgs/s offered  applied  hub CPU  µs/msg  edge p50/p99 ms');
  const results = new Map<string, Map<number, number>>();
  async function phase(s: Side, rate: number): Promise<void> {
    await Promise.all(s.subs.map((p) => ask(p, { cmd: 'open', mix: { events: 25, changes: 5 } })));
    // A full read within the last minute has the hub keep its document encoded as rows change (a
    // page or a polling `tma ls --hub` does this): one read before the phase, as --read asks.
    if (readFirst) await fetch(`${s.url}/v1/agents`, { headers: { authorization: `Bearer ${viewer}` } }).then((r) => r.arrayBuffer());
    const profiling = prof !== '' && s.name !== 'before';
    if (profiling) await ask(s.hub, { cmd: 'prof-start' });
    const a = (await ask(s.hub, { cmd: 'stats' })) as { cpuMs: number; applied: number; at: number };
    const sent = (await Promise.all(s.gens.map((g) => ask(g, { rate: rate / gens, secs, batch: 1 })))) as unknown as { rows: number }[];
    const frames = sent.reduce((x, y) => x + y.rows, 0);
    let b = (await ask(s.hub, { cmd: 'stats' })) as { cpuMs: number; applied: number; at: number };
    for (let i = 0; i < 50 && b.applied - a.applied < frames; i++) {
      await new Promise((r) => setTimeout(r, 20));
      b = (await ask(s.hub, { cmd: 'stats' })) as typeof b;
    }
    if (profiling) await ask(s.hub, { cmd: 'prof-stop', file: join(prof, `hub-${rate}.cpuprofile`) });
    await new Promise((r) => setTimeout(r, 200));
    const reps = (await Promise.all(s.subs.map((p) => ask(p, { cmd: 'close' })))) as unknown as { events: number[] }[];
    const ev = reps.flatMap((r) => r.events);
    const wall = (b.at - a.at) / 1000;
    const cpu = (b.cpuMs - a.cpuMs) / 1000 / wall;
    const applied = b.applied - a.applied;
    const usPer = ((b.cpuMs - a.cpuMs) * 1000) / Math.max(1, applied);
    if (!results.has(s.name)) results.set(s.name, new Map());
    results.get(s.name)!.set(rate, cpu);
    console.log(
      `${s.name.padEnd(13)}${String(rate).padStart(14)}  ${(applied / wall).toFixed(0).padStart(7)}  ${(cpu * 100).toFixed(0).padStart(6)}%  ${usPer.toFixed(0).padStart(6)}  ${`${pct(ev, 0.5).toFixed(0)}/${pct(ev, 0.99).toFixed(0)}`.padStart(15)}`,
    );
  }
  for (const rate of rates) for (const s of sides) await phase(s, rate);
  if (before) {
    console.log('');
    for (const rate of rates) {
      const b = results.get('before')!.get(rate)!;
      const a = results.get('after')!.get(rate)!;
      console.log(`${rate} msgs/s: hub CPU ${(b * 100).toFixed(0)}% before, ${(a * 100).toFixed(0)}% after (×${(a / b).toFixed(2)} of before)`);
    }
  }
  await Promise.all(sides.map((s) => new Promise((r) => s.hub.once('exit', r).send({ cmd: 'close' }))));
  for (const c of children) c.kill();
}

const role = process.argv[2];
if (role === '--hub') {
  asChild<HubStart>(hubChild);
} else if (role === '--generator') {
  asChild<GeneratorStart>(generator);
} else if (role === '--subscribers') {
  asChild<{ url: string; token: string }>((m) => subscribers(m.url, m.token));
} else {
  main().catch(fail);
}
