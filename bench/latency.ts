// Hook-to-hub latency: `tma event` → the delta frame a hub receives, over 200 events, beside a bare
// WebSocket echo round trip measured in the same run. The hub here is a minimal recording
// WebSocket server (this measures the collector's wake path, not a hub's fan-out).
//
// Build, then compile and run this script (not part of any test run):
//   npm run build
//   npx tsc bench/latency.ts --outDir dist/bench --module nodenext --moduleResolution nodenext \
//     --target es2022 --types node --skipLibCheck && node dist/bench/latency.js [N]

import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import WebSocket, { WebSocketServer } from 'ws';

function repoRoot(): string {
  let d = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(d, 'package.json')) || !existsSync(join(d, 'bin/tma.js'))) {
    const up = resolve(d, '..');
    if (up === d) throw new Error('repository root not found');
    d = up;
  }
  return d;
}

const REPO = repoRoot();
const N = Number(process.argv[2] ?? 200);
const dir = mkdtempSync(join(tmpdir(), 'tma-bench-latency-'));
const name = `tma-bench-${process.pid}`;
const env = { ...process.env, TMUX: '', TMUX_PANE: '', XDG_RUNTIME_DIR: join(dir, 'run'), XDG_CONFIG_HOME: join(dir, 'cfg') };
const tmux = (...a: string[]) => execFileSync('tmux', ['-u', '-L', name, '-f', '/dev/null', ...a], { encoding: 'utf8', env });

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
const fmt = (xs: number[]) => `p50 ${pct(xs, 50).toFixed(2)} ms  p99 ${pct(xs, 99).toFixed(2)} ms  (n=${xs.length})`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(cond: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out');
    await sleep(2);
  }
}

function run(args: string[], extra: Record<string, string>): Promise<void> {
  return new Promise((done) => {
    const c = spawn(process.execPath, [join(REPO, 'bin/tma.js'), ...args], { env: { ...env, ...extra }, stdio: 'ignore' });
    c.on('exit', () => done());
  });
}

async function echoRoundTrips(n: number): Promise<number[]> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((r) => wss.once('listening', () => r()));
  wss.on('connection', (ws) => ws.on('message', (d) => ws.send(d.toString())));
  const ws = new WebSocket(`ws://127.0.0.1:${(wss.address() as AddressInfo).port}`);
  await new Promise<void>((r) => ws.once('open', () => r()));
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await new Promise<void>((r) => {
      ws.once('message', () => r());
      ws.send(`{"type":"heartbeat","at":${i}}`);
    });
    out.push(performance.now() - t0);
  }
  ws.close();
  await new Promise<void>((r) => wss.close(() => r()));
  return out;
}

async function main(): Promise<void> {
  // A stand-in claude in one pane, as the integration tests run it.
  tmux('new-session', '-d', '-s', 'main', '-x', '100', '-y', '30', 'sh');
  const pane = tmux('display-message', '-p', '-t', 'main', '#{pane_id}').trim();
  const claude = join(dir, 'claude');
  symlinkSync('/usr/bin/python3', claude);
  const control = join(dir, 'control');
  writeFileSync(control, join(REPO, 'test/integration/screens/claude-idle-marked.txt'));
  writeFileSync(join(dir, 'keys'), '');
  tmux('send-keys', '-t', pane, `exec ${claude} ${join(REPO, 'test/support/standin.py')} ${control} ${join(dir, 'keys')}`, 'Enter');
  await until(() => tmux('display-message', '-p', '-t', pane, '#{pane_current_command}').trim() === 'claude', 5000);

  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((r) => wss.once('listening', () => r()));
  const arrivals: { at: number; state: string }[] = [];
  wss.on('connection', (ws) => {
    // A hub heartbeats too; a silent one is dropped by the collector after three intervals.
    const beat = setInterval(() => ws.send(JSON.stringify({ type: 'heartbeat', at: Date.now() })), 1000);
    ws.on('close', () => clearInterval(beat));
    ws.on('message', (d) => {
      const at = performance.now();
      const f = JSON.parse(d.toString()) as { type: string; upserts?: { pane: string; state: string }[] };
      if (f.type === 'hello') ws.send(JSON.stringify({ type: 'welcome', protocol: 1, resume_from: null }));
      for (const r of f.upserts ?? []) if (r.pane === pane) arrivals.push({ at, state: r.state });
    });
  });
  writeFileSync(join(dir, 'token'), 'bench');
  const collector = spawn(
    process.execPath,
    [join(REPO, 'bin/tma.js'), 'collector', '--hub', `ws://127.0.0.1:${(wss.address() as AddressInfo).port}`, '--token-file', join(dir, 'token'),
      '--socket-name', name, '--interval', '60'],
    { env, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let collectorLog = '';
  collector.stderr!.on('data', (d) => (collectorLog += d));
  try {
    await sleep(1500);
    const endToEnd: number[] = [];
    const afterExit: number[] = [];
    const eventProcess: number[] = [];
    for (let i = 0; i < N; i++) {
      const [kind, state] = i % 2 === 0 ? ['UserPromptSubmit', 'working'] : ['Stop', 'idle'];
      const seen = arrivals.length;
      const t0 = performance.now();
      await run(['event', '--agent', 'claude', '--kind', kind, '--socket-name', name], { TMUX_PANE: pane });
      const t1 = performance.now();
      await until(() => arrivals.slice(seen).some((a) => a.state === state), 5000).catch((e: Error) => {
        const opts = tmux('show-options', '-p', '-t', pane).split('\n').filter((l) => l.startsWith('@agent_state') || l.startsWith('@agent_source') || l.startsWith('@agent_stamped'));
        throw new Error(`${collectorLog} ${opts.join(' / ')} event ${i} (${kind}): no ${state} row arrived; got ${JSON.stringify(arrivals.slice(-4))}: ${e.message}`);
      });
      const at = arrivals.slice(seen).find((a) => a.state === state)!.at;
      endToEnd.push(at - t0);
      eventProcess.push(t1 - t0);
      afterExit.push(at - t1);
    }
    const echo = await echoRoundTrips(N);
    process.stdout.write(
      [
        `tma event → frame at the hub:        ${fmt(endToEnd)}`,
        `  of which the event process itself:  ${fmt(eventProcess)}`,
        `  frame after the event process exit: ${fmt(afterExit)}`,
        `bare WebSocket echo round trip:       ${fmt(echo)}`,
        '',
      ].join('\n'),
    );
  } finally {
    collector.kill('SIGTERM');
    for (const c of wss.clients) c.terminate();
    wss.close();
    try {
      tmux('kill-server');
    } catch {
      // already gone
    }
    rmSync(join(process.env.TMUX_TMPDIR || '/tmp', `tmux-${process.getuid?.() ?? 0}`, name), { force: true });
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
