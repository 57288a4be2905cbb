// What `tma watch` costs while nothing changes: a scratch tmux server with 50 panes (10 static
// stand-in agents, 40 shells), `tma watch` running in a terminal (a pane of a second server, as a
// person would run it), and in the same run an idle `tmux attach` client of the first server, the
// cost a person already accepts. CPU time from /proc (utime+stime, children included), per minute.
// The watch drives its own detection cycles (no collector needed) when tmux reports a move, and
// a cycle that changes nothing redraws nothing. Also counts the bytes the watch wrote to its
// terminal (an age label turns over at most once a minute).
//
// Build, then run (not part of any test run):  npm run build && node dist/bench/watch.js [SECS=60]

import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// A private socket folder before anything reads TMUX_TMPDIR: no collector of the user's sees us.
const root = mkdtempSync(join(tmpdir(), 'tma-bench-watch-'));
const { privateTmuxDir, atBenchExit } = await import('./scratch-server.js');
privateTmuxDir(root);
const { ScratchTmux, REPO, waitFor } = await import('../test/support/scratch-tmux.js');
const { TICK, ticks, treeTicks } = await import('./proc-cpu.js');

const SECS = Number(process.argv[2] ?? 60);
const WARM_MS = 8000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const AGENTS: [string, string][] = [
  ['claude', 'claude-working.txt'],
  ['claude', 'claude-idle.txt'],
  ['claude', 'claude-permission-dialog.txt'],
  ['codex', 'codex-working.txt'],
  ['codex', 'codex-idle.txt'],
  ['codex', 'codex-approval-dialog.txt'],
  ['claude', 'claude-idle.txt'],
  ['opencode', 'opencode-working.txt'],
  ['pi', 'pi-idle.txt'],
  ['claude', 'claude-working.txt'],
];

const childPid = (pid: number) => Number(readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(' ')[0]);

async function main(): Promise<void> {
  const t = new ScratchTmux('bw');
  const viewer = new ScratchTmux('bwv');
  let client: ReturnType<typeof spawn> | null = null;
  atBenchExit(() => {
    client?.kill('SIGKILL');
    viewer.kill();
    t.kill();
  });
  t.start('s0');
  const panes = [t.tmux('display-message', '-p', '-t', 's0', '#{pane_id}').trim()];
  for (let s = 0; s < 5; s++) {
    if (s > 0) {
      t.tmux('new-session', '-d', '-s', `s${s}`, '-x', '80', '-y', '24');
      panes.push(t.tmux('display-message', '-p', '-t', `s${s}`, '#{pane_id}').trim());
    }
    for (let w = 1; w < 10; w++) panes.push(t.newPane(`s${s}`));
  }
  for (let i = 0; i < AGENTS.length; i++) await t.standIn(panes[i * 5]!, AGENTS[i]![0], AGENTS[i]![1]);

  // The idle client: a real `tmux attach` on a pseudo-terminal, looking at a shell.
  client = spawn('script', ['-qfc', `stty cols 120 rows 40; tmux -L ${t.name} attach -t s0`, '/dev/null'], {
    env: { ...process.env, TMUX: '', TERM: 'xterm' },
    stdio: ['pipe', 'ignore', 'ignore'],
  });
  let clientPid = 0;
  await waitFor(() => (clientPid = Number(t.tmux('list-clients', '-F', '#{client_pid}').trim().split('\n')[0])) > 0, 'the idle client');

  // The watch, in a terminal of its own: a pane of the viewer server, output logged by pipe-pane.
  viewer.start('v');
  const vpane = viewer.tmux('display-message', '-p', '-t', 'v', '#{pane_id}').trim();
  viewer.tmux('resize-window', '-t', 'v', '-x', '150', '-y', '45');
  const out = join(viewer.dir, 'watch.out');
  viewer.tmux('pipe-pane', '-t', vpane, `cat >> ${out}`);
  mkdirSync(join(viewer.dir, 'cfg'));
  const cmd = `env XDG_CONFIG_HOME=${join(viewer.dir, 'cfg')} ${process.execPath} ${join(REPO, 'bin/tma.js')} -L ${t.name} watch`;
  viewer.tmux('send-keys', '-t', vpane, cmd, 'Enter');
  await waitFor(() => viewer.tmux('capture-pane', '-p', '-t', vpane).includes('BLOCKED (2)'), 'the watch showing the agents', 30_000);
  const watchPid = childPid(Number(viewer.tmux('display-message', '-p', '-t', vpane, '#{pane_pid}').trim()));
  await sleep(WARM_MS);

  const serverPid = Number(t.tmux('display-message', '-p', '#{pid}').trim());
  const bytes0 = readFileSync(out).length;
  const w0 = treeTicks(watchPid);
  const c0 = ticks(clientPid).own;
  const s0 = ticks(serverPid).own;
  await sleep(SECS * 1000);
  const w = treeTicks(watchPid) - w0;
  const c = ticks(clientPid).own - c0;
  const s = ticks(serverPid).own - s0;
  const bytes = readFileSync(out).length - bytes0;
  const perMin = (n: number) => `${((n / TICK) * (60 / SECS)).toFixed(2)} CPU-s/min (${((100 * n) / TICK / SECS).toFixed(2)}% of a core)`;
  const screen = viewer.tmux('capture-pane', '-p', '-t', vpane).split('\n')[0];
  console.log(`watch bench: 50 panes (10 static agents), ${SECS} s after ${WARM_MS / 1000} s warm-up; ${screen}`);
  console.log(`tma watch (its tmux link included):  ${perMin(w)}`);
  console.log(`idle tmux client (tmux attach):      ${perMin(c)}`);
  console.log(`tmux server meanwhile:               ${perMin(s)} (serves both, and the watch's cycles)`);
  console.log(`bytes the watch wrote to its terminal: ${bytes} (${((bytes * 60) / SECS).toFixed(0)}/min: age labels turning over)`);
}

await main();
process.exit(0);
