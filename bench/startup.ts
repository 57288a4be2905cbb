// Start-up cost of the one-shot verbs a status bar or an agent's hook runs over and over, next to
// `node -e 0` measured in the same run, interleaved round by round so machine load hits all alike.
// Against a scratch tmux server (private TMUX_TMPDIR) with two stand-in agents and two shells;
// the caches (XDG_CACHE_HOME, private too) are warmed once first, as they are on any machine
// after the first run. Two phases, each with its own `node -e 0`:
// - no collector: every status looks for itself (status from the bundle, from the tsc output,
//   with a config.toml; ls --json; the event fallback), next to its floor: a CommonJS node start
//   plus the three tmux clients such a status starts (listing, captures, writes);
// - with `tma hub` (the README's main job, its local collector following the scratch server)
//   started by the bench and ended by it: status takes the quick path while the collector's
//   heartbeat is fresh, and asks the collector over its wake socket for its read; rows for a
//   config.toml, json, the quick path reading tmux itself (TMA_QUICK_STATUS=tmux, the way before
//   the socket), the full path forced (TMA_QUICK_STATUS=0), ls --json, and two floors: a
//   CommonJS node start plus one tmux client, and plus one round trip on the wake socket (the
//   same request a status sends, so the collector's read is in it). The collector's own CPU over
//   the phase, per request it answered, is printed under the table: that work moved there.
// Wall time and CPU time (user + sys of the process and the tmux clients it waits for, from
// wait4's rusage) per command: median and p90, and the ratio of medians. Then the modules each
// verb loads (test/support/module-trace.mjs). Commands run with a minimal environment: a variable
// such as NODE_EXTRA_CA_CERTS (about 45 ms on every node start) would blur every ratio.
//
// Build, then run (not part of any test run):  npm run build && node dist/bench/startup.js [ROUNDS=20]
//   (BENCH_BASELINE=DIR adds the same rows for another built checkout; BENCH_SHOW_MODULES=1 lists modules)

import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { canonicalSocketPath, wakeDir, wakeSocketPath } from '../collector/fleet/wake.js';
import { REPO, ScratchTmux } from '../test/support/scratch-tmux.js';
import { atBenchExit } from './scratch-server.js';

const ROUNDS = Number(process.argv[2] ?? 20);
const dir = mkdtempSync(join(tmpdir(), 'tma-bench-startup-'));
process.env.TMUX_TMPDIR = join(dir, 'tmux');
mkdirSync(process.env.TMUX_TMPDIR);

// Runs each command line once per round and reports wall and CPU seconds from os.wait4, which
// counts the children the command itself waited for (the tmux clients) too.
const RUNNER = String.raw`
import json, os, sys, time
spec = json.load(sys.stdin)
out = {name: [] for name, _, _ in spec["cmds"]}
for _ in range(spec["rounds"]):
    for name, argv, extra in spec["cmds"]:
        t0 = time.perf_counter()
        pid = os.posix_spawn(argv[0], argv, {**spec["env"], **extra}, file_actions=[(os.POSIX_SPAWN_OPEN, 1, "/dev/null", os.O_WRONLY, 0), (os.POSIX_SPAWN_OPEN, 2, "/dev/null", os.O_WRONLY, 0), (os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0)])
        _, status, ru = os.wait4(pid, 0)
        wall = time.perf_counter() - t0
        out[name].append([wall, ru.ru_utime + ru.ru_stime, os.waitstatus_to_exitcode(status)])
json.dump(out, sys.stdout)
`;

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const ms = (s: number) => `${(s * 1000).toFixed(0).padStart(4)} ms`;

function modulesOf(argv: string[], env: NodeJS.ProcessEnv): string[] {
  const trace = join(dir, 'trace');
  rmSync(trace, { force: true });
  writeFileSync(trace, '');
  spawnSync(process.execPath, ['--import', join(REPO, 'test/support/module-trace.mjs'), ...argv.slice(1)], {
    env: { ...env, TMA_MODULE_TRACE: trace },
    stdio: 'ignore',
    timeout: 20_000,
  });
  return [
    ...new Set(
      readFileSync(trace, 'utf8')
        .split('\n')
        .filter((u) => u.startsWith('file:')),
    ),
  ];
}

/** Runs the commands interleaved for ROUNDS rounds; the table lines, ratios against the first row. */
function measure(title: string, cmds: [string, string[], Record<string, string>][], env: NodeJS.ProcessEnv): [string, string[]] {
  // Warm the caches (manifests, config), as every run after a machine's first finds them.
  for (const [, argv, extra] of cmds.slice(1)) spawnSync(argv[0]!, argv.slice(1), { env: { ...env, ...extra }, stdio: 'ignore' });
  const res = spawnSync('python3', ['-c', RUNNER], {
    input: JSON.stringify({ rounds: ROUNDS, cmds, env }),
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  if (res.status !== 0) throw new Error(`runner failed: ${res.stderr}`);
  const out = JSON.parse(res.stdout) as Record<string, [number, number, number][]>;
  const base = out[cmds[0]![0]]!;
  const baseWall = pct(
    base.map((r) => r[0]),
    50,
  );
  const baseCpu = pct(
    base.map((r) => r[1]),
    50,
  );
  const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  const lines = [
    `${ROUNDS} interleaved rounds, load average ${load} after`,
    'command          wall p50   wall p90   cpu p50    cpu p90    ×node wall  ×node cpu  modules  exit≠0',
  ];
  for (const [name, argv, extra] of cmds) {
    const rows = out[name]!;
    const wall = rows.map((r) => r[0]);
    const cpu = rows.map((r) => r[1]);
    const mods = name.startsWith('node') ? 0 : modulesOf(argv, { ...env, ...extra }).length;
    const bad = rows.filter((r) => r[2] !== 0).length;
    lines.push(
      `${name.padEnd(15)} ${ms(pct(wall, 50))}   ${ms(pct(wall, 90))}   ${ms(pct(cpu, 50))}    ${ms(pct(cpu, 90))}    ` +
        `${(pct(wall, 50) / baseWall).toFixed(2).padStart(5)}×      ${(pct(cpu, 50) / baseCpu).toFixed(2).padStart(5)}×    ${String(mods).padStart(4)}     ${bad}`,
    );
  }
  return [title, lines];
}

/** A node script that starts the three tmux clients a status without a collector needs. */
function floorOfOwnLook(server: string, pane: string): string {
  const calls = [
    ['list-panes', '-a'],
    ['capture-pane', '-p', '-e', '-t', pane],
    ['set-option', '-s', '@tma_bench_floor', '1'],
  ];
  return `const { spawnSync } = require('node:child_process'); for (const c of ${JSON.stringify(calls)}) spawnSync('tmux', ['-L', ${JSON.stringify(server)}, ...c]);`;
}

async function main(): Promise<void> {
  const t = new ScratchTmux('bench-start');
  atBenchExit(() => t.kill());
  try {
    const first = t.start();
    const second = t.newPane();
    t.newPane();
    t.newPane();
    await t.standIn(first, 'claude', 'claude-idle.txt');
    await t.standIn(second, 'codex', 'codex-idle.txt');
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: dir,
      TMUX_TMPDIR: process.env.TMUX_TMPDIR,
      XDG_CONFIG_HOME: join(dir, 'cfg'),
      XDG_CACHE_HOME: join(dir, 'cache'),
      XDG_RUNTIME_DIR: join(dir, 'run'),
      TMUX_PANE: first,
    };
    const tma = [process.execPath, join(REPO, 'bin/tma.js')];
    const config = join(dir, 'config.toml');
    writeFileSync(config, '[status]\nworking = { glyph = "W", color = "colour33" }\n');
    // The unbundled row runs the same status from the tsc output (dist/cli/), for comparison.
    const cmds: [string, string[], Record<string, string>][] = [
      ['node -e 0', [process.execPath, '-e', '0'], {}],
      // The least a status that looks for itself can cost: a CommonJS node start and three tmux
      // clients (the listing, the captures, the writes), as many as its cycle starts.
      ['node+3 tmux', [process.execPath, '-e', floorOfOwnLook(t.name, first)], {}],
      ['tma status', [...tma, '-L', t.name, 'status'], {}],
      ['  unbundled', [...tma, '-L', t.name, 'status'], { TMA_BUNDLE: '0' }],
      ['  +config.toml', [...tma, '-L', t.name, 'status'], { TMA_CONFIG: config }],
      ['tma ls --json', [...tma, '-L', t.name, 'ls', '--json'], {}],
      ['tma event', [...tma, 'event', '--agent', 'claude', '--kind', 'Notification', '--socket-name', t.name], {}],
    ];
    // BENCH_BASELINE=<another built checkout> adds its rows, e.g. the commit before a change.
    const before = process.env.BENCH_BASELINE;
    if (before) {
      const old = [process.execPath, join(before, 'bin/tma.js')];
      // Its own cache folder: each build keeps one manifest entry and would evict the other's.
      const own = { XDG_CACHE_HOME: join(dir, 'cache-before') };
      cmds.push(
        ['before: status', [...old, '-L', t.name, 'status'], own],
        ['before: +config', [...old, '-L', t.name, 'status'], { ...own, TMA_CONFIG: config }],
        ['before: ls', [...old, '-L', t.name, 'ls', '--json'], own],
        ['before: event', [...old, 'event', '--agent', 'claude', '--kind', 'Notification', '--socket-name', t.name], own],
      );
    }
    const phase1 = measure('no collector: every status looks for itself (list-panes, /proc walk, captures, writes)', cmds, env);

    // The case a status bar lives in: `tma hub` (README's main job) runs this machine's collector,
    // whose heartbeat vouches for the stamps, so `tma status` takes the quick path.
    const hub = spawn(process.execPath, [...tma.slice(1), 'hub', '--listen', '127.0.0.1:0', '-L', t.name], { env, stdio: 'ignore' });
    atBenchExit(() => hub.kill('SIGKILL'));
    const heartbeat = () => Number(t.tmux('show-options', '-sqv', '@tma_collector_at').trim()) || 0;
    for (const deadline = Date.now() + 30_000; Date.now() - heartbeat() > 1000;) {
      if (Date.now() > deadline) throw new Error("the hub's collector never wrote a fresh heartbeat");
      await new Promise((r) => setTimeout(r, 100));
    }
    const wake = wakeSocketPath(canonicalSocketPath(t.socketPath()), wakeDir(env));
    // The same request and reading as the quick status's (collector/fleet/quick-read.ts), bare.
    const roundTrip = `const s = require('node:net').createConnection(${JSON.stringify(wake)}); let n = 0;
      s.on('connect', () => s.write('TMAQ\\n')); s.on('data', (c) => { n += c.length; if (c.includes(10)) s.destroy(); });
      s.on('close', () => { if (n < 2) process.exitCode = 1; });`;
    const withCollector: [string, string[], Record<string, string>][] = [
      ['node -e 0', [process.execPath, '-e', '0'], {}],
      // The least any status can cost: a CommonJS node start and one tmux client, or one round trip on the wake socket.
      ['node+1 tmux', [process.execPath, '-e', `require('node:child_process').spawnSync('tmux', ['-L', ${JSON.stringify(t.name)}, 'list-panes', '-a'])`], {}],
      ['node+1 socket', [process.execPath, '-e', roundTrip], {}],
      ['tma status', [...tma, '-L', t.name, 'status'], {}],
      ['  +config.toml', [...tma, '-L', t.name, 'status'], { TMA_CONFIG: config }],
      ['  --format json', [...tma, '-L', t.name, 'status', '--format', 'json'], {}],
      ['  via tmux', [...tma, '-L', t.name, 'status'], { TMA_QUICK_STATUS: 'tmux' }],
      ['  full path', [...tma, '-L', t.name, 'status'], { TMA_QUICK_STATUS: '0' }],
      ['tma ls --json', [...tma, '-L', t.name, 'ls', '--json'], {}],
    ];
    if (before) {
      const old = [process.execPath, join(before, 'bin/tma.js')];
      withCollector.push(['before: status', [...old, '-L', t.name, 'status'], { XDG_CACHE_HOME: join(dir, 'cache-before') }]);
    }
    const hubCpu = () =>
      readFileSync(`/proc/${hub.pid}/stat`, 'utf8')
        .split(') ')[1]!
        .split(' ')
        .slice(11, 13)
        .reduce((a, b) => a + Number(b), 0);
    const cpuBefore = hubCpu();
    const phase2 = measure("collector running (tma hub): status takes the heartbeat's word", withCollector, env);
    // Each socket row is run once to warm up and ROUNDS times measured; the module trace runs the status rows once more.
    const asked = 4 * (ROUNDS + 1) + 3;
    const ticks = hubCpu() - cpuBefore;
    phase2[1].push(
      `collector (tma hub) CPU over the phase: ${ticks * 10} ms (at 100 ticks/s), ≤ ${((ticks * 10) / asked).toFixed(1)} ms per socket request (${asked} requests, idle work included)`,
    );
    hub.kill('SIGTERM');
    for (const [title, rows] of [phase1, phase2] as const) {
      console.log(`\n${title}`);
      for (const line of rows) console.log(line);
    }
    if (process.env.BENCH_SHOW_MODULES) {
      for (const [name, argv, extra] of cmds.slice(1))
        console.log(
          `\n${name}:\n${modulesOf(argv, { ...env, ...extra })
            .map((u) => u.replace(`file://${REPO}/`, '  '))
            .join('\n')}`,
        );
    }
  } finally {
    t.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
