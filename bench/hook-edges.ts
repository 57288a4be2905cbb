// Captures a watched collector spends on quiet edges: a hook-driven agent (its hook's idle claim
// renewed by a hook event every 20 s) next to a hookless one (screen stamps only), both repainting
// their idle screens every 500 ms, as a person typing into the prompt box makes them. The hookless
// pane is the same-run baseline: a capture per edge. The engine and the output watch run in this
// process, as `tma collector` wires them (collector-assembly.ts), over a real tmux server.
//
// Build, then run (not part of any test run):  npm run build && node dist/bench/hook-edges.js [SECONDS=20]

import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadManifestSet } from '../collector/core/manifest-load.js';
import { DEFAULT_FOLD } from '../collector/core/types.js';
import { Engine } from '../collector/engine/cycle.js';
import { intakeEvent } from '../collector/engine/event-intake.js';
import { bundledManifestDir, readManifestFiles } from '../collector/manifest-files.js';
import { OutputWatch } from '../collector/tmux/control-output.js';
import { readProcesses } from '../collector/tmux/proc-table.js';
import { openRunner, type TmuxRunner } from '../collector/tmux/runner.js';
import { atBenchExit, privateTmuxDir, removeScratch } from './scratch-server.js';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const SECONDS = Number(process.argv[2] ?? 20);
const dir = mkdtempSync(join(tmpdir(), 'tma-bench-hook-edges-'));
privateTmuxDir(dir);
const name = `tma-bench-hook-edges-${process.pid}`;
const env = { ...process.env, TMUX: '', TMUX_PANE: '' };
const tmux = (...a: string[]) => execFileSync('tmux', ['-u', '-L', name, '-f', '/dev/null', ...a], { encoding: 'utf8', env });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(cond: () => boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

async function main(): Promise<void> {
  tmux('new-session', '-d', '-s', 'main', '-x', '120', '-y', '40', 'sh');
  atBenchExit(() => removeScratch(tmux, name, dir));
  const hooked = tmux('display-message', '-p', '-t', 'main', '#{pane_id}').trim();
  const plain = tmux('split-window', '-d', '-P', '-F', '#{pane_id}', '-t', 'main', 'sh').trim();
  const claude = join(dir, 'claude');
  symlinkSync('/usr/bin/python3', claude);
  // Two copies of one idle screen: naming the other copy makes the stand-in repaint the same screen.
  const idle = [join(dir, 'idle-a.txt'), join(dir, 'idle-b.txt')];
  for (const f of idle) copyFileSync(join(REPO, 'test/fixtures/claude-idle.txt'), f);
  const controls = new Map<string, string>();
  for (const pane of [hooked, plain]) {
    const control = join(dir, `control-${pane.slice(1)}`);
    writeFileSync(control, idle[0]!);
    writeFileSync(join(dir, `keys-${pane.slice(1)}`), '');
    controls.set(pane, control);
    tmux('send-keys', '-t', pane, `exec ${claude} ${join(REPO, 'test/support/standin.py')} ${control} ${join(dir, `keys-${pane.slice(1)}`)}`, 'Enter');
  }
  await until(() => [hooked, plain].every((p) => tmux('display-message', '-p', '-t', p, '#{pane_current_command}').trim() === 'claude'), 5000, 'the stand-ins');

  const real = await openRunner({ kind: 'name', name }, { mode: 'control', bin: 'tmux' });
  const captures = new Map<string, number>([
    [hooked, 0],
    [plain, 0],
  ]);
  const runner: TmuxRunner = {
    mode: real.mode,
    run: (argv, o) => real.run(argv, o),
    runChain: (cmds, o) => {
      for (const c of cmds) if (c[0] === 'capture-pane') captures.set(c[4]!, (captures.get(c[4]!) ?? 0) + 1);
      return real.runChain(cmds, o);
    },
    close: () => real.close(),
  };
  const manifests = loadManifestSet(readManifestFiles(bundledManifestDir()), []).manifests;
  const engine = new Engine({ runner, manifests, fold: DEFAULT_FOLD, host: 'bench', readProcs: readProcesses });
  // One cycle at a time, another at once if woken meanwhile; a 5 s idle sweep as the collector's.
  let running = false;
  let again = false;
  const cycle = async (): Promise<void> => {
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      do {
        again = false;
        await engine.cycle();
      } while (again);
    } finally {
      running = false;
    }
  };
  const edges = new Map<string, number>([
    [hooked, 0],
    [plain, 0],
  ]);
  const socketPath = tmux('display-message', '-p', '#{socket_path}').trim();
  const watch = new OutputWatch({
    target: { kind: 'path', path: socketPath },
    bin: 'tmux',
    env,
    runner: real,
    onDue: (panes) => {
      for (const p of panes) edges.set(p, (edges.get(p) ?? 0) + 1);
      engine.markPainted(panes);
      void cycle();
    },
  });
  await watch.start();
  atBenchExit(() => watch.close());
  engine.watchOutput(() => watch.sessions().length > 0);
  await until(() => watch.sessions().length > 0, 5000, 'the output watch');
  const hook = async () => {
    await intakeEvent({ runner: real, manifests, agent: 'claude', kind: 'Stop', pane: hooked, payload: '{}', now: Date.now() });
    engine.hookEvent(hooked);
    await cycle();
  };
  await hook();
  await cycle();
  await sleep(4000); // both panes looked at once and settled before counting
  await cycle();
  for (const p of [hooked, plain]) {
    edges.set(p, 0);
    captures.set(p, 0);
  }
  const skipped0 = engine.liveness.counts.skipped;
  const cpu0 = process.cpuUsage();
  const sweep = setInterval(() => void cycle(), 5000);
  const beats = setInterval(() => void hook(), 20_000);
  let k = 0;
  const typing = setInterval(() => {
    k++;
    for (const c of controls.values()) writeFileSync(c, idle[k % 2]!);
  }, 500);
  await sleep(SECONDS * 1000);
  clearInterval(typing);
  clearInterval(sweep);
  clearInterval(beats);
  await sleep(500);
  const cpu = process.cpuUsage(cpu0);
  const row = (label: string, p: string) =>
    `${label.padEnd(34)} edges ${String(edges.get(p)).padStart(4)}   captures ${String(captures.get(p)).padStart(4)}   state ${tmux('show-options', '-pqv', '-t', p, '@agent_state').trim()} via ${tmux('show-options', '-pqv', '-t', p, '@agent_source').trim()}`;
  console.log(`hook-edges: ${SECONDS} s, both panes repaint their idle screen every 500 ms (tmux ${tmux('display-message', '-p', '#{version}').trim()})`);
  console.log(row('hook-driven (hook idle, live)', hooked));
  console.log(row('baseline: hookless (screen stamps)', plain));
  // The hookless pane counts as demoted once it had 5 edges with no hook event: it is captured on
  // every edge either way, and a first hook event would lift it.
  console.log(
    `edges let pass without a capture: ${engine.liveness.counts.skipped - skipped0}; demoted panes (the hookless one included): ${engine.liveness.demotedCount()}`,
  );
  console.log(`engine process CPU over the run: ${((cpu.user + cpu.system) / 1000).toFixed(0)} ms`);
  watch.close();
  real.close();
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
