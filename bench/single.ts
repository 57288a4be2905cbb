// The self-contained collector against the npm install, measured in one run: what lands on the
// host (bytes on disk) and how long `tma --version` and `tma ls --json` (a whole detection
// cycle on an empty scratch tmux server) take to start, median and p90 of interleaved rounds.
// The npm install is the packed tarball installed into an empty prefix from the npm cache; the
// single file runs under this node; the executable needs none.
//
// Build, then run (not part of any test run):  npm run build && node dist/bench/single.js [ROUNDS=15]

import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO } from '../test/support/scratch-tmux.js';

const rounds = Number(process.argv[2] ?? 15);
const dir = mkdtempSync(join(tmpdir(), 'tma-bench-single-'));
const prefix = join(dir, 'prefix');
const home = join(dir, 'home');
mkdirSync(home, { recursive: true });
const env = {
  PATH: '/usr/bin:/bin',
  HOME: home,
  TMUX_TMPDIR: home,
  XDG_CONFIG_HOME: join(home, 'c'),
  XDG_STATE_HOME: join(home, 's'),
  XDG_CACHE_HOME: join(home, 'k'),
};

try {
  execFileSync(process.execPath, [join(REPO, 'tools/bundle-single.mjs'), '--sea'], { cwd: REPO, stdio: 'ignore' });
  const packed = JSON.parse(execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], { cwd: REPO, encoding: 'utf8' })) as {
    filename: string;
  }[];
  execFileSync('npm', ['i', '-g', '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund', '--omit=dev', join(dir, packed[0]!.filename)], {
    stdio: 'ignore',
  });
  const version = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string }).version;
  const exe = join(REPO, 'dist', 'single', `tma-${version}-linux-${process.arch}`);
  const file = join(REPO, 'dist', 'single', 'tma.cjs');
  const kinds = [
    { name: 'npm install', argv: [process.execPath, join(prefix, 'bin', 'tma')], bytes: du(prefix) },
    { name: 'single file', argv: [process.execPath, file], bytes: statSync(file).size },
    { name: 'executable', argv: [exe], bytes: statSync(exe).size },
  ];
  execFileSync('tmux', ['-L', 'bench-single', '-f', '/dev/null', 'new-session', '-d'], { env });
  const verbs = [['--version'], ['-L', 'bench-single', 'ls', '--json']];
  const times = new Map<string, number[]>();
  for (const k of kinds) for (const v of verbs) spawnSync(k.argv[0]!, [...k.argv.slice(1), ...v], { env }); // warm caches
  for (let r = 0; r < rounds; r++) {
    for (const k of kinds) {
      for (const v of verbs) {
        const t0 = process.hrtime.bigint();
        const run = spawnSync(k.argv[0]!, [...k.argv.slice(1), ...v], { env });
        if (run.status !== 0) throw new Error(`${k.name} ${v.join(' ')}: exit ${run.status} ${String(run.stderr)}`);
        const key = `${k.name}|${v.join(' ')}`;
        times.set(key, [...(times.get(key) ?? []), Number(process.hrtime.bigint() - t0) / 1e6]);
      }
    }
  }
  const q = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))]!;
  const base = kinds[0]!;
  console.log(`node ${process.version}, ${rounds} rounds; ratios against the npm install of the same build`);
  console.log('kind          on disk     ratio   --version p50/p90 ms   ratio   ls --json p50/p90 ms   ratio');
  for (const k of kinds) {
    const cell = (v: string[]) => {
      const xs = times.get(`${k.name}|${v.join(' ')}`)!;
      const b = times.get(`${base.name}|${v.join(' ')}`)!;
      return `${q(xs, 0.5).toFixed(0).padStart(6)} / ${q(xs, 0.9).toFixed(0).padEnd(6)}        ${(q(xs, 0.5) / q(b, 0.5)).toFixed(2)}×`;
    };
    console.log(
      `${k.name.padEnd(12)}  ${(k.bytes / 1e6).toFixed(1).padStart(6)} MB  ${(k.bytes / base.bytes).toFixed(2)}×  ${cell(verbs[0]!)}  ${cell(verbs[1]!)}`,
    );
  }
} finally {
  spawnSync('tmux', ['-L', 'bench-single', 'kill-server'], { env });
  rmSync(dir, { recursive: true, force: true });
}

function du(path: string): number {
  return Number(execFileSync('du', ['-sb', path], { encoding: 'utf8' }).split('\t')[0]);
}
