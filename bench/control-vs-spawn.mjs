// Spawn vs control-mode cost of the two reads the collector makes every cycle.
// Build first, then run:  npx tsc -p tsconfig.build.json && node bench/control-vs-spawn.mjs [N] [panes]
// Not part of any test run: it only prints medians and ratios for a scratch server.

import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { openRunner } from '../dist/collector/tmux/runner.js';

const N = Number(process.argv[2] ?? 200);
const PANES = Number(process.argv[3] ?? 20);
const name = `tma-bench-${randomBytes(4).toString('hex')}`;
const tmux = (...a) => execFileSync('tmux', ['-u', '-L', name, ...a], { encoding: 'utf8' });

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

async function time(runner, argv) {
  const ms = [];
  for (let i = 0; i < N; i++) {
    const t = process.hrtime.bigint();
    await runner.run(argv);
    ms.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  return median(ms);
}

tmux('-f', '/dev/null', 'new-session', '-d', '-s', 'bench', '-x', '200', '-y', '50', 'sh');
for (let i = 1; i < PANES; i++) tmux('new-window', '-d', '-t', 'bench', 'sh');
const fmt = '#{pane_id}\u001f#{pane_pid}\u001f#{session_name}\u001f#{pane_current_command}\u001f#{pane_title}';
const reads = {
  'list-panes -a': ['list-panes', '-a', '-F', fmt],
  'capture-pane': ['capture-pane', '-p', '-e', '-t', 'bench', '-S', '-50'],
};
const target = { kind: 'name', name };
const spawnR = await openRunner(target, { mode: 'spawn', bin: 'tmux' });
const controlR = await openRunner(target, { mode: 'control', bin: 'tmux' });
try {
  console.log(`${N} calls each, ${PANES} panes, control attached: ${controlR.attached}`);
  for (const [label, argv] of Object.entries(reads)) {
    const s = await time(spawnR, argv);
    const c = await time(controlR, argv);
    console.log(`${label.padEnd(14)} spawn ${s.toFixed(2)} ms  control ${c.toFixed(3)} ms  ratio ${(s / c).toFixed(1)}x`);
  }
} finally {
  controlR.close();
  spawnR.close();
  tmux('kill-server');
  // tmux 3.3a leaves the socket file behind.
  rmSync(`${process.env.TMUX_TMPDIR ?? '/tmp'}/tmux-${process.getuid()}/${name}`, { force: true });
}
