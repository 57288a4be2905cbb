// Start-up cost of the one-shot verbs a status bar or an agent's hook runs over and over, next to
// `node -e 0` measured in the same run, interleaved round by round so machine load hits all alike.
// Against a scratch tmux server (private TMUX_TMPDIR) with two stand-in agents and two shells;
// the caches (XDG_CACHE_HOME, private too) are warmed once first, as they are on any machine
// after the first run. Rows: status from the bundle, from the tsc output, and with a config.toml. Wall time and CPU time (user + sys of the process and the tmux clients it
// waits for, from wait4's rusage) per command: median and p90, and the ratio of medians.
// Then the modules each verb loads (test/support/module-trace.mjs).
//
// Build, then run (not part of any test run):  npm run build && node dist/bench/startup.js [ROUNDS=20]
//   (BENCH_BASELINE=DIR adds the same rows for another built checkout; BENCH_SHOW_MODULES=1 lists modules)

import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
  return [...new Set(readFileSync(trace, 'utf8').split('\n').filter((u) => u.startsWith('file:')))];
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
    // Warm the caches (manifests, config), as every run after a machine's first finds them.
    for (const [, argv, extra] of cmds.slice(1)) spawnSync(argv[0]!, argv.slice(1), { env: { ...env, ...extra }, stdio: 'ignore' });
    const res = spawnSync('python3', ['-c', RUNNER], {
      input: JSON.stringify({ rounds: ROUNDS, cmds, env }),
      encoding: 'utf8',
      maxBuffer: 64 << 20,
    });
    if (res.status !== 0) throw new Error(`runner failed: ${res.stderr}`);
    const out = JSON.parse(res.stdout) as Record<string, [number, number, number][]>;
    const base = out['node -e 0']!;
    const baseWall = pct(base.map((r) => r[0]), 50);
    const baseCpu = pct(base.map((r) => r[1]), 50);
    const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
    console.log(`start-up, ${ROUNDS} interleaved rounds, load average ${load}`);
    console.log('command          wall p50   wall p90   cpu p50    cpu p90    ×node wall  ×node cpu  modules  exit≠0');
    for (const [name, argv, extra] of cmds) {
      const rows = out[name]!;
      const wall = rows.map((r) => r[0]);
      const cpu = rows.map((r) => r[1]);
      const mods = name === 'node -e 0' ? 0 : modulesOf(argv, { ...env, ...extra }).length;
      const bad = rows.filter((r) => r[2] !== 0).length;
      console.log(
        `${name.padEnd(15)} ${ms(pct(wall, 50))}   ${ms(pct(wall, 90))}   ${ms(pct(cpu, 50))}    ${ms(pct(cpu, 90))}    ` +
          `${(pct(wall, 50) / baseWall).toFixed(2).padStart(5)}×      ${(pct(cpu, 50) / baseCpu).toFixed(2).padStart(5)}×    ${String(mods).padStart(4)}     ${bad}`,
      );
    }
    if (process.env.BENCH_SHOW_MODULES) {
      for (const [name, argv, extra] of cmds.slice(1)) console.log(`\n${name}:\n${modulesOf(argv, { ...env, ...extra }).map((u) => u.replace(`file://${REPO}/`, '  ')).join('\n')}`);
    }
  } finally {
    t.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
