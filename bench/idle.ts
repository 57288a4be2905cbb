// Collector idle cost: a scratch tmux server with 50 panes (10 static stand-in agents, 40 shells)
// and a `tma collector` following it while nothing changes. CPU time comes from /proc (utime +
// stime, children included), so it holds up on a loaded machine. The same run measures a floor:
// the bare reads one poll cycle cannot avoid (list-panes over a control client plus the process
// tree under the panes), done by a node process of its own at the same cadence. Also counts how often the
// collector rewrites the static panes' stamps (@agent_stamped_at changes, sampled every second).
//
// Build, then run (not part of any test run):  npm run build && node dist/bench/idle.js [SECS=30] [INTERVAL_S]

import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// A private socket folder before anything reads TMUX_TMPDIR: the collector sees only our server.
const FLOOR = process.argv[2] === '--floor';
const tmuxDir = FLOOR ? '' : mkdtempSync(join(tmpdir(), 'tma-bench-idle-sock-'));
if (!FLOOR) process.env.TMUX_TMPDIR = tmuxDir;

const { ScratchTmux, REPO } = await import('../test/support/scratch-tmux.js');
const { openRunner } = await import('../collector/tmux/runner.js');
const { readProcesses } = await import('../collector/tmux/proc-table.js');
const { LIST_PANES_FORMAT, parsePaneList } = await import('../collector/engine/pane-list.js');
const { startHub } = await import('../hub/server.js');
const { pino } = await import('pino');
const { atBenchExit } = await import('./scratch-server.js');
const { ticks, treeTicks } = await import('./proc-cpu.js');

// `--floor NAME INTERVAL_S`: the child process that does only the bare reads, measured from outside.
if (FLOOR) {
  const runner = await openRunner({ kind: 'name', name: process.argv[3]! }, { mode: 'control', bin: 'tmux' });
  const every = Number(process.argv[4]) * 1000;
  process.stdin.on('end', () => process.exit(0)).resume();
  for (;;) {
    const [out] = await runner.runChain([['list-panes', '-a', '-F', LIST_PANES_FORMAT]]);
    await readProcesses(parsePaneList(out ?? '').map((r) => r.panePid));
    await new Promise((r) => setTimeout(r, every));
  }
}
const SECS = Number(process.argv[2] ?? 30);
// No INTERVAL_S: the collector runs with its defaults (1 s poll, 5 s sweep once settled), and the
// floor reads at the settled cadence.
const GIVEN = process.argv[3];
const INTERVAL_S = Number(GIVEN ?? 5);
const TICK = 100; // clock ticks per second (USER_HZ) on Linux
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const AGENTS: [string, string][] = [
  ['claude', 'claude-working.txt'],
  ['claude', 'claude-idle.txt'],
  ['claude', 'claude-permission-dialog.txt'],
  ['claude', 'claude-working.txt'],
  ['codex', 'codex-working.txt'],
  ['codex', 'codex-idle.txt'],
  ['codex', 'codex-working.txt'],
  ['claude', 'claude-idle.txt'],
  ['opencode', 'opencode-working.txt'],
  ['pi', 'pi-idle.txt'],
];

async function main(): Promise<void> {
  const t = new ScratchTmux('idle');
  atBenchExit(() => {
    t.kill();
    rmSync(tmuxDir, { recursive: true, force: true });
  });
  t.start('s0');
  const panes: string[] = [t.tmux('display-message', '-p', '-t', 's0', '#{pane_id}').trim()];
  for (let s = 0; s < 5; s++) {
    if (s > 0) {
      t.tmux('new-session', '-d', '-s', `s${s}`, '-x', '80', '-y', '24');
      panes.push(t.tmux('display-message', '-p', '-t', `s${s}`, '#{pane_id}').trim());
    }
    for (let w = 1; w < 10; w++) panes.push(t.newPane(`s${s}`));
  }
  // One agent every fifth pane, so they spread over all five sessions.
  const agentPanes: string[] = [];
  for (let i = 0; i < AGENTS.length; i++) {
    const [cmd, fixture] = AGENTS[i]!;
    const pane = panes[i * 5]!;
    await t.standIn(pane, cmd, fixture);
    agentPanes.push(pane);
  }
  const serverPid = Number(t.tmux('display-message', '-p', '#{pid}').trim());

  const hub = await startHub({
    config: {
      listen: { host: '127.0.0.1', port: 0 },
      staleAfterMs: null,
      lostAfterMs: 86_400_000,
      collectors: [{ host: 'idle-host', token: 'idle-collector-token' }],
      clients: [],
      ssh: [],
    },
    logger: pino({ level: 'warn' }),
  });
  const tokenFile = join(t.dir, 'token');
  writeFileSync(tokenFile, 'idle-collector-token');
  const env = { ...process.env, TMUX: '', TMUX_PANE: '', XDG_RUNTIME_DIR: join(t.dir, 'run'), XDG_CONFIG_HOME: join(t.dir, 'cfg') };
  mkdirSync(env.XDG_RUNTIME_DIR, { recursive: true });

  // Stamp rewrites of the static agent panes: @agent_stamped_at sampled once a second.
  const stampsNow = () => {
    const m = new Map<string, string>();
    for (const line of t.tmux('list-panes', '-a', '-F', '#{pane_id} #{@agent_stamped_at}').split('\n')) {
      const [p, v] = line.split(' ');
      if (p && agentPanes.includes(p)) m.set(p, v ?? '');
    }
    return m;
  };
  async function window(sample: boolean): Promise<{ rewrites: number; server: number }> {
    let last = sample ? stampsNow() : new Map<string, string>();
    let rewrites = 0;
    const s0 = ticks(serverPid).own;
    const end = Date.now() + SECS * 1000;
    let stop = false;
    const sampler = (async () => {
      while (sample && !stop) {
        await sleep(1000);
        const cur = stampsNow();
        for (const [p, v] of cur) if (last.get(p) !== v) rewrites++;
        last = cur;
      }
    })();
    while (Date.now() < end) await sleep(Math.min(1000, end - Date.now()));
    stop = true;
    await sampler;
    return { rewrites, server: ticks(serverPid).own - s0 };
  }
  const pct = (ticksUsed: number) => (100 * ticksUsed) / TICK / SECS;

  try {
    // Floor: what one cycle must read, at the collector's cadence, in a process of its own.
    const floorProc = spawn(process.execPath, [process.argv[1]!, '--floor', t.name, String(INTERVAL_S)], { env, stdio: ['pipe', 'ignore', 'inherit'] });
    await sleep(3000);
    const f0 = treeTicks(floorProc.pid!);
    const floor = await window(false);
    const floorTicks = treeTicks(floorProc.pid!) - f0;
    floorProc.stdin.end();
    await new Promise((r) => floorProc.once('exit', r));

    const collector = spawn(
      process.execPath,
      // IDLE_NODE_ARGS (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof") profiles the collector.
      [
        ...(process.env.IDLE_NODE_ARGS ?? '').split(' ').filter(Boolean),
        join(REPO, 'bin/tma.js'),
        'collector',
        '--hub',
        `ws://127.0.0.1:${hub.port}`,
        '--token-file',
        tokenFile,
        '--host-name',
        'idle-host',
        '--socket-name',
        t.name,
        ...(GIVEN ? ['--interval', GIVEN] : []),
      ],
      { env, stdio: ['ignore', 'ignore', 'inherit'] },
    );
    atBenchExit(() => collector.kill('SIGKILL'));
    try {
      // Settle: every agent row published and stamped, start-up costs behind us.
      const deadline = Date.now() + 60_000;
      while (hub.store.rows().filter((r) => r.host === 'idle-host').length < AGENTS.length) {
        if (Date.now() > deadline) throw new Error(`the collector published only ${JSON.stringify(hub.store.rows().map((r) => [r.pane, r.agent, r.state]))}`);
        await sleep(200);
      }
      await sleep(5000);
      const c0 = treeTicks(collector.pid!);
      const own0 = ticks(collector.pid!).own;
      const run = await window(true);
      const collTicks = treeTicks(collector.pid!) - c0;
      const ownTicks = ticks(collector.pid!).own - own0;
      const states = hub.store
        .rows()
        .filter((r) => r.host === 'idle-host')
        .map((r) => r.state)
        .sort()
        .join(' ');
      console.log(
        `idle bench: 50 panes (10 static agents: ${states}), ${SECS} s per window, ${GIVEN ? `--interval ${GIVEN}` : 'default interval'}, floor every ${INTERVAL_S} s; CPU time from /proc`,
      );
      console.log(`collector (with its tmux clients):       ${pct(collTicks).toFixed(2)}% of a core`);
      console.log(`  of which the node process itself:      ${pct(ownTicks).toFixed(2)}% of a core`);
      console.log(`  tmux server meanwhile:                 ${pct(run.server).toFixed(2)}% of a core (incl. the 1/s stamp sampler)`);
      console.log(`  stamp rewrites of static agents:       ${((run.rewrites * 60) / SECS).toFixed(1)}/min`);
      console.log(
        `baseline: bare list-panes + proc walk:   ${pct(floorTicks).toFixed(2)}% of a core (a node process doing only that, with its control client)`,
      );
      console.log(`  tmux server meanwhile:                 ${pct(floor.server).toFixed(2)}% of a core`);
      console.log(`ratio collector / baseline:              ${(collTicks / Math.max(1, floorTicks)).toFixed(2)}×`);
    } finally {
      collector.kill('SIGTERM');
      await new Promise((r) => collector.once('exit', r));
    }
  } finally {
    await hub.close();
    t.kill();
    rmSync(tmuxDir, { recursive: true, force: true });
  }
}

await main();
