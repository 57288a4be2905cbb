// Screen-only change → edge at a hub subscriber. No hooks: a stand-in agent repaints its pane
// (working ↔ a permission dialog), and the collector, polling only once a minute, must see it from
// the pane's own output. Timed from the repaint request to the edge at a `/v1/subscribe?events=1`
// WebSocket reader. The same run measures the floor: from the same request until tmux itself shows
// the new screen (capture-pane polled). Also counts the deltas a static screen causes.
//
// Build, then run (not part of any test run):  npm run build && node dist/bench/screen.js [N=40]

import { execFile, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { pino } from 'pino';
import WebSocket from 'ws';
import { startHub } from '../hub/server.js';
import { atBenchExit, privateTmuxDir, removeScratch } from './scratch-server.js';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const N = Math.ceil(Number(process.argv[2] ?? 40) / 2) * 2;
const HOST = 'screen-host';
const dir = mkdtempSync(join(tmpdir(), 'tma-bench-screen-'));
privateTmuxDir(dir);
const name = `tma-bench-screen-${process.pid}`;
const env = { ...process.env, TMUX: '', TMUX_PANE: '', XDG_RUNTIME_DIR: join(dir, 'run'), XDG_CONFIG_HOME: join(dir, 'cfg') };
const tmux = (...a: string[]) => execFileSync('tmux', ['-u', '-L', name, '-f', '/dev/null', ...a], { encoding: 'utf8', env });
const tmuxAsync = async (...a: string[]) => (await promisify(execFile)('tmux', ['-u', '-L', name, '-f', '/dev/null', ...a], { encoding: 'utf8', env })).stdout;
/** CPU milliseconds a process has used so far (user + system), from /proc. */
const cpuMs = (pid: number) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1000) / 100;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const fmt = (xs: number[]) =>
  `p50 ${pct(xs, 50).toFixed(0)} ms  p90 ${pct(xs, 90).toFixed(0)} ms  p99 ${pct(xs, 99).toFixed(0)} ms  max ${Math.max(...xs).toFixed(0)} ms  (n=${xs.length})`;

async function until(cond: () => boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(2);
  }
}

const FIXTURES = join(REPO, 'test/fixtures');
const lastLine = (f: string) =>
  (readFileSync(f, 'utf8').split('\n---\n')[1] ?? '')
    .replace(/\x1b\[[0-9;?]*[@-~]/g, '')
    .split('\n')
    .map((l) => l.trimEnd())
    .filter((l) => l.trim())
    .at(-1)!;

async function main(): Promise<void> {
  tmux('new-session', '-d', '-s', 'main', '-x', '120', '-y', '40', 'sh');
  atBenchExit(() => removeScratch(tmux, name, dir));
  const pane = tmux('display-message', '-p', '-t', 'main', '#{pane_id}').trim();
  const claude = join(dir, 'claude');
  symlinkSync('/usr/bin/python3', claude);
  const control = join(dir, 'control');
  const screens = { working: join(FIXTURES, 'claude-working.txt'), blocked: join(FIXTURES, 'claude-permission-dialog.txt') };
  writeFileSync(control, screens.working);
  writeFileSync(join(dir, 'keys'), '');
  tmux('send-keys', '-t', pane, `exec ${claude} ${join(REPO, 'test/support/standin.py')} ${control} ${join(dir, 'keys')}`, 'Enter');
  await until(() => tmux('display-message', '-p', '-t', pane, '#{pane_current_command}').trim() === 'claude', 5000, 'the stand-in');

  const hub = await startHub({
    config: {
      listen: { host: '127.0.0.1', port: 0 },
      staleAfterMs: null,
      lostAfterMs: 86_400_000,
      collectors: [{ host: HOST, token: 'screen-collector-token' }],
      clients: [{ name: 'bench', token: 'screen-viewer-token', role: 'viewer' }],
      ssh: [],
    },
    logger: pino({ level: 'warn' }),
  });
  writeFileSync(join(dir, 'token'), 'screen-collector-token');
  const collector = spawn(
    process.execPath,
    [
      join(REPO, 'bin/tma.js'),
      'collector',
      '--hub',
      `ws://127.0.0.1:${hub.port}`,
      '--token-file',
      join(dir, 'token'),
      '--host-name',
      HOST,
      '--socket-name',
      name,
      '--interval',
      '60',
    ],
    { env, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  atBenchExit(() => collector.kill('SIGKILL'));
  const edges: { at: number; to: string }[] = [];
  let spinner: NodeJS.Timeout | null = null;
  let deltas = 0;
  hub.store.onChange(() => deltas++);
  const ws = new WebSocket(`${hub.url.replace(/^http/, 'ws')}/v1/subscribe?events=1`, { headers: { authorization: 'Bearer screen-viewer-token' } });
  ws.on('message', (d) => {
    const e = JSON.parse(String(d)) as { pane?: string; to?: string };
    if (e.pane === pane && typeof e.to === 'string') edges.push({ at: performance.now(), to: e.to });
  });
  try {
    await until(() => hub.store.rows().some((r) => r.pane === pane && r.state === 'working' && !r.stale), 20_000, 'the working row');
    // Static screen: how many store changes in 10 s while nothing on screen moves.
    const d0 = deltas;
    await sleep(10_000);
    const staticDeltas = deltas - d0;
    // The stand-in repaints whenever the control file names another file: two frames of the
    // working screen that differ only in the spinner glyph make it animate.
    const spin = [join(dir, 'spin-a.txt'), join(dir, 'spin-b.txt')];
    const working = readFileSync(screens.working, 'utf8');
    writeFileSync(spin[0]!, working);
    writeFileSync(spin[1]!, working.replace('\u2722', '\u2736'));
    const show = (to: 'blocked' | 'working', animate: boolean) => {
      if (spinner) clearInterval(spinner);
      spinner = null;
      if (to === 'blocked' || !animate) {
        writeFileSync(control, screens[to]);
        return;
      }
      let k = 0;
      writeFileSync(control, spin[0]!);
      spinner = setInterval(() => writeFileSync(control, spin[++k % 2]!), 80);
    };
    const round = async (n: number, animate: boolean) => {
      const toEdge: Record<string, number[]> = { blocked: [], working: [] };
      const floor: number[] = [];
      const cpu0 = cpuMs(collector.pid!);
      for (let i = 0; i < n; i++) {
        const to = i % 2 === 0 ? 'blocked' : 'working';
        const seen = edges.length;
        const marker = lastLine(screens[to]);
        await sleep(300 + Math.random() * 700); // isolated changes, at random phase to the poll
        const t0 = performance.now();
        show(to, animate);
        let shown: number | null = null;
        const end = Date.now() + 15_000;
        while (shown === null || !edges.slice(seen).some((e) => e.to === to)) {
          if (Date.now() > end) throw new Error(`timed out waiting for the edge to ${to}`);
          if (shown === null && (await tmuxAsync('capture-pane', '-p', '-t', pane)).includes(marker)) shown = performance.now();
          else await sleep(2);
        }
        floor.push(shown - t0);
        toEdge[to]!.push(edges.slice(seen).find((e) => e.to === to)!.at - t0);
      }
      const cpu = cpuMs(collector.pid!) - cpu0;
      show('blocked', false);
      return { toEdge, floor, cpu };
    };
    const still = await round(N, false);
    const busy = await round(N, true);
    console.log(`screen bench: ${N} screen-only changes per round, collector polling every 60 s; the machine is shared and loaded`);
    for (const [label, r] of [
      ['still working screen', still],
      ['spinner on the working screen (repaint every 80 ms)', busy],
    ] as const) {
      console.log(`${label}:`);
      console.log(`  screen change → edge at a subscriber (all):   ${fmt([...r.toEdge.blocked!, ...r.toEdge.working!])}`);
      console.log(`    working → blocked:                           ${fmt(r.toEdge.blocked!)}`);
      console.log(`    blocked → working:                           ${fmt(r.toEdge.working!)}`);
      console.log(`  baseline: screen change → tmux shows it:      ${fmt(r.floor)}`);
      console.log(`  collector CPU:                                ${(r.cpu / N).toFixed(1)} ms per change (${r.cpu.toFixed(0)} ms in the round)`);
    }
    console.log(`static screen: hub store changes in 10 s:       ${staticDeltas}`);
  } finally {
    if (spinner) clearInterval(spinner);
    ws.terminate();
    collector.kill('SIGTERM');
    await hub.close();
    removeScratch(tmux, name, dir);
  }
}

await main();
