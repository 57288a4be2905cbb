// Hook-to-subscriber latency on a real hub, two ways: `bin/tma-hook` as an agent runs it (its fast
// path hands the event to the collector, which stamps it), and a bare `tma event` in a pane (a Node
// process stamps, then pokes the collector's wake socket). Either way → the delta over WebSocket →
// the hub's store → the edge a `/v1/subscribe?events=1` reader gets, on both stream transports
// (WebSocket and SSE) at once. A bare WebSocket echo round trip is
// measured in the same run, as the floor of what one loopback hop costs on this machine.
//
// The hub runs in this process with its default stream coalescing (50 ms), so the numbers are what
// a user of `tma hub` sees; the moment the row lands in the hub's store is timed too, which is the
// part the hook path itself controls; the collector is a real `tma collector` process polling only once a
// minute, so every change it publishes comes from the hook.
//
// Build, then run the compiled script (not part of any test run):
//   npm run build && node dist/bench/latency.js [N]

import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import WebSocket, { WebSocketServer } from 'ws';
import { startHub } from '../hub/server.js';
import { atBenchExit, privateTmuxDir, removeScratch } from './scratch-server.js';

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
// Even, so each measure starts from the state the previous one left behind (idle after a Stop).
const N = Math.ceil(Number(process.argv[2] ?? 200) / 2) * 2;
const HOST = 'bench-host';
const COLLECTOR_TOKEN = 'bench-collector-token';
const VIEWER_TOKEN = 'bench-viewer-token';
const dir = mkdtempSync(join(tmpdir(), 'tma-bench-hub-'));
privateTmuxDir(dir);
const name = `tma-bench-hub-${process.pid}`;
const env = { ...process.env, TMUX: '', TMUX_PANE: '', XDG_RUNTIME_DIR: join(dir, 'run'), XDG_CONFIG_HOME: join(dir, 'cfg') };
const tmux = (...a: string[]) => execFileSync('tmux', ['-u', '-L', name, '-f', '/dev/null', ...a], { encoding: 'utf8', env });

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
const fmt = (xs: number[]) => `p50 ${pct(xs, 50).toFixed(2)} ms  p99 ${pct(xs, 99).toFixed(2)} ms  (n=${xs.length})`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ISOLATION_MS = 150;

async function until(cond: () => boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(2);
  }
}

function run(cmd: string, args: string[], extra: Record<string, string>): Promise<void> {
  return new Promise((done) => {
    const c = spawn(cmd, args, { env: { ...env, ...extra }, stdio: 'ignore' });
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

interface Arrival {
  at: number;
  to: string;
}

type Edge = { pane?: string; to?: string; host?: string };

/** Edges for `pane` as a WebSocket subscriber receives them. */
function wsSubscriber(url: string, pane: string, into: Arrival[]): Promise<WebSocket> {
  const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/v1/subscribe?events=1`, { headers: { authorization: `Bearer ${VIEWER_TOKEN}` } });
  ws.on('message', (d) => {
    const at = performance.now();
    const e = JSON.parse(d.toString()) as Edge;
    if (e.pane === pane && e.host === HOST && typeof e.to === 'string') into.push({ at, to: e.to });
  });
  return new Promise((r, j) => {
    ws.once('open', () => r(ws));
    ws.once('error', j);
  });
}

/** Edges for `pane` as an SSE subscriber receives them. */
function sseSubscriber(url: string, pane: string, into: Arrival[]): Promise<() => void> {
  return new Promise((resolveOpen, reject) => {
    const req = request(`${url}/v1/subscribe?events=1`, { headers: { authorization: `Bearer ${VIEWER_TOKEN}`, accept: 'text/event-stream' } }, (res) => {
      res.setEncoding('utf8');
      let buf = '';
      res.on('data', (chunk: string) => {
        const at = performance.now();
        buf += chunk;
        let cut: number;
        while ((cut = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, cut);
          buf = buf.slice(cut + 2);
          const data = block
            .split('\n')
            .filter((l) => l.startsWith('data:'))
            .map((l) => l.slice(5).trimStart())
            .join('\n');
          if (!data) continue;
          const e = JSON.parse(data) as Edge;
          if (e.pane === pane && e.host === HOST && typeof e.to === 'string') into.push({ at, to: e.to });
        }
      });
      resolveOpen(() => req.destroy());
    });
    req.on('error', reject);
    req.end();
  });
}

async function main(): Promise<void> {
  tmux('new-session', '-d', '-s', 'main', '-x', '100', '-y', '30', 'sh');
  atBenchExit(() => removeScratch(tmux, name, dir));
  const pane = tmux('display-message', '-p', '-t', 'main', '#{pane_id}').trim();
  const claude = join(dir, 'claude');
  symlinkSync('/usr/bin/python3', claude);
  const control = join(dir, 'control');
  writeFileSync(control, join(REPO, 'test/integration/screens/claude-idle-marked.txt'));
  writeFileSync(join(dir, 'keys'), '');
  tmux('send-keys', '-t', pane, `exec ${claude} ${join(REPO, 'test/support/standin.py')} ${control} ${join(dir, 'keys')}`, 'Enter');
  await until(() => tmux('display-message', '-p', '-t', pane, '#{pane_current_command}').trim() === 'claude', 5000, 'the stand-in');

  const hub = await startHub({
    config: {
      listen: { host: '127.0.0.1', port: 0 },
      staleAfterMs: null,
      lostAfterMs: 86_400_000,
      collectors: [{ host: HOST, token: COLLECTOR_TOKEN }],
      clients: [{ name: 'bench', token: VIEWER_TOKEN, role: 'viewer' }],
      ssh: [],
    },
    logger: pino({ level: 'warn' }),
  });
  writeFileSync(join(dir, 'token'), COLLECTOR_TOKEN);
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
    { env, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  atBenchExit(() => collector.kill('SIGKILL'));
  let collectorLog = '';
  collector.stderr.on('data', (d) => (collectorLog += d));
  const viaWs: Arrival[] = [];
  const viaSse: Arrival[] = [];
  let ws: WebSocket | null = null;
  let stopSse: () => void = () => undefined;
  try {
    await until(() => hub.store.document().agents.some((r) => r.pane === pane && !r.stale), 10_000, 'the collector publishing');
    ws = await wsSubscriber(hub.url, pane, viaWs);
    stopSse = await sseSubscriber(hub.url, pane, viaSse);
    await sleep(500);
    /** N alternating events fired by `fire`, each timed from its start to the edge at both subscribers. */
    const measure = async (label: string, fire: (kind: string) => Promise<void>) => {
      const toWs: number[] = [];
      const toSse: number[] = [];
      const toStore: number[] = [];
      const firing: number[] = [];
      const afterExit: number[] = [];
      for (let i = 0; i < N; i++) {
        // A Stop leaves the agent idle with attention set: the edge's class is `done`.
        const [kind, to] = i % 2 === 0 ? ['UserPromptSubmit', 'working'] : ['Stop', 'done'];
        const seenWs = viaWs.length;
        const seenSse = viaSse.length;
        const state = to === 'working' ? 'working' : 'idle';
        let stored: number | null = null;
        const inStore = () => {
          if (stored === null && hub.store.document().agents.some((r) => r.pane === pane && r.state === state)) stored = performance.now();
          return stored !== null;
        };
        // Isolated events: each one starts after the previous flush's gathering spell (50 ms) is
        // over, so the figure is a lone event's path, not one riding a flush already scheduled.
        await sleep(ISOLATION_MS);
        const t0 = performance.now();
        let fired = false;
        // The store is watched while the hook runs too: with the fast path the row can land before
        // the hook process has exited.
        const watching = until(() => fired || inStore(), 5000, 'never').catch(() => undefined);
        await fire(kind);
        fired = true;
        firing.push(performance.now() - t0);
        await watching;
        const arrived = (xs: Arrival[], from: number) => xs.slice(from).find((a) => a.to === to);
        await until(
          () => inStore() && arrived(viaWs, seenWs) !== undefined && arrived(viaSse, seenSse) !== undefined,
          5000,
          `${label} edge ${i} (${kind} → ${to})`,
        ).catch((e: unknown) => {
          throw new Error(`${(e as Error).message}\n${collectorLog}`);
        });
        toStore.push(stored! - t0);
        toWs.push(arrived(viaWs, seenWs)!.at - t0);
        toSse.push(arrived(viaSse, seenSse)!.at - t0);
        afterExit.push(arrived(viaWs, seenWs)!.at - t0 - firing[i]!);
      }
      return { toWs, toSse, toStore, firing, afterExit };
    };
    const viaEvent = await measure('tma event', (kind) =>
      run(process.execPath, [join(REPO, 'bin/tma.js'), 'event', '--agent', 'claude', '--kind', kind, '--socket-name', name], { TMUX_PANE: pane }),
    );
    // The wrapper as an agent runs it. Its fallback is a script that counts itself before doing
    // the `tma event`, so a fast path that silently failed shows up in the report.
    const fallbacks = join(dir, 'fallbacks');
    const fallbackBin = join(dir, 'tma-counted');
    writeFileSync(fallbackBin, `#!/bin/sh\necho x >> "${fallbacks}"\nexec "${process.execPath}" "${join(REPO, 'bin/tma.js')}" "$@"\n`);
    chmodSync(fallbackBin, 0o755);
    const viaHook = await measure('tma-hook', (kind) =>
      run(join(REPO, 'bin/tma-hook'), ['claude', kind], { TMUX_PANE: pane, TMA_HOOK_SOCKET: name, TMA_BIN: fallbackBin }),
    );
    const fellBack = existsSync(fallbacks) ? readFileSync(fallbacks, 'utf8').split('\n').filter(Boolean).length : 0;
    const echo = await echoRoundTrips(N);
    const lines: [string, string][] = [
      ['tma-hook (fast path) → edge at a hub subscriber (WebSocket)', fmt(viaHook.toWs)],
      ['tma-hook (fast path) → edge at a hub subscriber (SSE)', fmt(viaHook.toSse)],
      ["tma-hook (fast path) → row in the hub's store (before coalescing)", fmt(viaHook.toStore)],
      ['  of which the hook process itself', fmt(viaHook.firing)],
      ['  edge (WebSocket) after the hook process exit', fmt(viaHook.afterExit)],
      ['  hooks that fell back to tma event', `${fellBack} of ${N}`],
      ['tma event → edge at a hub subscriber (WebSocket)', fmt(viaEvent.toWs)],
      ['tma event → edge at a hub subscriber (SSE)', fmt(viaEvent.toSse)],
      ["tma event → row in the hub's store (before coalescing)", fmt(viaEvent.toStore)],
      ['  of which the event process itself', fmt(viaEvent.firing)],
      ['  edge (WebSocket) after the event process exit', fmt(viaEvent.afterExit)],
      ['bare WebSocket echo round trip', fmt(echo)],
    ];
    const width = Math.max(...lines.map(([label]) => label.length)) + 2;
    process.stdout.write(lines.map(([label, value]) => `${`${label}:`.padEnd(width)}${value}\n`).join(''));
  } finally {
    ws?.terminate();
    stopSse();
    collector.kill('SIGTERM');
    await hub.close();
    removeScratch(tmux, name, dir);
  }
}

await main();
