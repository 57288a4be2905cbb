// Cost of one engine cycle against the floor it replaces, on a 50-pane scratch server with 10
// stand-in agents. The floor is the same reads done the naive way, as separate processes: one
// `list-panes`, one `ps`, one `capture-pane` per agent pane. Run after `npm run build`:
//   node dist/bench/cycle.js [rounds]
// Prints medians and ratios; it is a measurement, not a test, and never fails on a slow machine.

import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadAgentManifests } from '../collector/manifest-files.js';
import { Engine } from '../collector/engine/cycle.js';
import { readProcesses } from '../collector/tmux/proc-table.js';
import { openRunner, type TmuxRunner } from '../collector/tmux/runner.js';
import { DEFAULT_FOLD } from '../collector/core/types.js';
import { privateTmuxDir } from './scratch-server.js';

const REPO = resolve(fileURLToPath(import.meta.url), '../../..');
const ROUNDS = Number(process.argv[2] ?? 30);
const PANES = 50;
const AGENTS = 10;
const name = `tma-bench-${process.pid}`;
const dir = mkdtempSync(join(tmpdir(), 'tma-bench-'));
privateTmuxDir(dir);
const tmux = (...a: string[]) => execFileSync('tmux', ['-u', '-L', name, '-f', '/dev/null', ...a], { encoding: 'utf8' });

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

async function timeIt(fn: () => unknown): Promise<number> {
  const samples: number[] = [];
  await fn(); // warm-up
  for (let i = 0; i < ROUNDS; i++) {
    const t0 = process.hrtime.bigint();
    await fn();
    samples.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return median(samples);
}

function setUp(): string[] {
  symlinkSync('/usr/bin/python3', join(dir, 'claude'));
  // A bare shell per pane: a user's startup files would only slow the set-up down.
  const shell = 'bash --norc --noprofile -i';
  tmux('new-session', '-d', '-s', 'bench', '-x', '80', '-y', '24', shell);
  for (let i = 1; i < PANES; i++) tmux('new-window', '-d', '-t', 'bench:', shell);
  const panes = tmux('list-panes', '-a', '-F', '#{pane_id}').trim().split('\n');
  for (const pane of panes.slice(0, AGENTS)) {
    const control = join(dir, `control-${pane.slice(1)}`);
    writeFileSync(control, join(REPO, 'test/fixtures/claude-working.txt'));
    tmux('send-keys', '-t', pane, `${join(dir, 'claude')} ${join(REPO, 'test/support/standin.py')} ${control} /dev/null`, 'Enter');
  }
  // Wait until every stand-in is the foreground command.
  for (let i = 0; i < 300; i++) {
    const cmds = tmux('list-panes', '-a', '-F', '#{pane_current_command}').split('\n');
    if (cmds.filter((c) => c === 'claude').length === AGENTS) return panes.slice(0, AGENTS);
    spawnSync('sleep', ['0.1']);
  }
  throw new Error('stand-ins did not start');
}

function floor(agentPanes: string[]): void {
  const run = (args: string[]) => spawnSync('tmux', ['-u', '-L', name, ...args], { encoding: 'utf8' });
  run(['list-panes', '-a', '-F', '#{pane_id} #{pane_pid} #{pane_current_command} #{pane_title}']);
  spawnSync('ps', ['-eo', 'pid,ppid,pgid,tpgid,comm'], { encoding: 'utf8' });
  for (const p of agentPanes) run(['capture-pane', '-p', '-e', '-t', p, '-S', '-50']);
}

async function engineCycle(runner: TmuxRunner): Promise<() => Promise<unknown>> {
  const manifests = loadAgentManifests({ env: {} }).manifests;
  // A private clock a second apart per cycle, and no reuse: every cycle does the full work
  // (list, process walk, capture and fold of every agent, guarded writes), never a shortcut.
  let now = Date.now();
  const engine = new Engine({
    runner,
    manifests,
    fold: { ...DEFAULT_FOLD, freshnessMs: 0 },
    host: 'bench',
    readProcs: readProcesses,
    now: () => (now += 1001),
  });
  return () => engine.cycle();
}

async function main(): Promise<void> {
  try {
    const agentPanes = setUp();
    const floorMs = await timeIt(() => floor(agentPanes));
    const spawnRunner = await openRunner({ kind: 'name', name }, { mode: 'spawn', bin: 'tmux' });
    const oneShot = await timeIt(await engineCycle(spawnRunner));
    spawnRunner.close();
    const controlRunner = await openRunner({ kind: 'name', name }, { mode: 'control', bin: 'tmux' });
    const longLived = await timeIt(await engineCycle(controlRunner));
    controlRunner.close();
    const cli = await timeIt(() => spawnSync(process.execPath, [join(REPO, 'bin/tma.js'), '-L', name, 'ls', '--json'], { encoding: 'utf8' }));

    const row = (label: string, ms: number) => console.log(`${label.padEnd(48)} ${ms.toFixed(2).padStart(8)} ms   ${(ms / floorMs).toFixed(2)}× floor`);
    console.log(`${PANES} panes, ${AGENTS} agents, median of ${ROUNDS}`);
    row('floor: list-panes + ps + capture per agent', floorMs);
    row('engine cycle, long-lived (control mode)', longLived);
    row('engine cycle, one-shot (a process per command)', oneShot);
    row('`tma ls --json` as a whole process', cli);
    console.log(`long-lived target ≤ 0.20× floor: ${longLived / floorMs <= 0.2 ? 'met' : 'not met'}`);
  } finally {
    spawnSync('tmux', ['-L', name, 'kill-server']);
    rmSync(join(process.env.TMUX_TMPDIR || '/tmp', `tmux-${process.getuid!()}`, name), { force: true });
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
