// The hub's notification journal under load. Phase 1, a real hub process: one host token sends
// 5,000 notify frames in one burst while /healthz is timed every 20 ms and another host's link
// notifies; prints the worst /healthz, the other link's ack time, acks vs refusals and the hub's
// RSS. Phase 2, the notifier in-process on a real file: 20,000 notifications to three sinks (one
// failing throughout), with journal lines, write calls and fsyncs per notification at 2k, 5k, 10k
// and 20k, each as a ratio to the same figure at 2k (constant work per notification: ~1.0), and
// the file size. `npm run build`, then `node dist/bench/notify-journal.js`.

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { WebSocket } from 'ws';
import { FrameBudget } from '../hub/notify/frame-budget.js';
import { HubNotifier } from '../hub/notify/hub-notifier.js';
import type { NotifySinkConfig } from '../hub/notify/sink-config.js';
import { notificationKey, type FleetNotification } from '../shared/notify.js';
import { PROTOCOL_VERSION } from '../shared/protocol.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function ev(i: number, host = 'flood'): FleetNotification {
  return {
    trigger: 'blocked',
    server: `/tmp/tmux-0/${host}`,
    pane: `%${i}`,
    agent: 'claude',
    episode_ms: 1_796_000_000_000 + i,
    at: 1_796_000_000_100 + i,
    state: 'blocked',
    detail: 'permission',
    locator: 'main:1.0',
    repo: 'api',
    branch: 'main',
    context_pct: null,
    pending_tool: 'Bash',
    pending_summary: null,
  };
}

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((ok) => s.listen(0, '127.0.0.1', ok));
  const port = (s.address() as { port: number }).port;
  await new Promise((ok) => s.close(ok));
  return port;
}

function link(url: string, token: string, host: string): Promise<{ ws: WebSocket; frames: Record<string, unknown>[] }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/v1/collect`, { headers: { authorization: `Bearer ${token}` } });
    const frames: Record<string, unknown>[] = [];
    ws.on('message', (d) => frames.push(JSON.parse(String(d)) as Record<string, unknown>));
    ws.once('error', reject);
    ws.once('open', () => {
      ws.send(JSON.stringify({ type: 'hello', protocol: PROTOCOL_VERSION, host, collector_version: 'bench', epoch: '0123456789abcdef', actions_allowed: [] }));
      ws.send(JSON.stringify({ type: 'snapshot', epoch: '0123456789abcdef', seq: 1, complete: true, servers: [] }));
      resolve({ ws, frames });
    });
  });
}

async function flood(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'tma-bench-notify-'));
  const sink = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(req.url === '/down' ? 500 : 204).end());
  });
  await new Promise<void>((ok) => sink.listen(0, '127.0.0.1', ok));
  const sinkUrl = `http://127.0.0.1:${(sink.address() as { port: number }).port}`;
  const port = await freePort();
  writeFileSync(
    join(dir, 'hub.toml'),
    [
      `listen = "127.0.0.1:${port}"`,
      '[[collector]]',
      'host = "flood"',
      'token = "tok-flood-bench"',
      '[[collector]]',
      'host = "calm"',
      'token = "tok-calm-bench"',
      '[[client]]',
      'name = "bench"',
      'token = "tok-viewer-bench"',
      'role = "viewer"',
      '[[notify]]',
      'name = "ok"',
      'kind = "webhook"',
      `url = "${sinkUrl}/ok"`,
      '[[notify]]',
      'name = "down"',
      'kind = "webhook"',
      `url = "${sinkUrl}/down"`,
      '[[notify]]',
      'name = "script"',
      'kind = "command"',
      'command = "cat >/dev/null"',
      '',
    ].join('\n'),
  );
  const hub = spawn(process.execPath, [join(ROOT, 'bin/tma.js'), 'hub', '--no-local', '--config', join(dir, 'hub.toml')], {
    env: { ...process.env, XDG_STATE_HOME: join(dir, 'state'), XDG_CONFIG_HOME: join(dir, 'cfg') },
    stdio: 'ignore',
  });
  const url = `http://127.0.0.1:${port}`;
  try {
    for (let i = 0; i < 600; i++) {
      if (
        await fetch(`${url}/healthz`).then(
          (r) => r.ok,
          () => false,
        )
      )
        break;
      await sleep(100);
    }
    const rss = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${hub.pid}/status`, 'utf8'))![1]) / 1024;
    const a = await link(url, 'tok-flood-bench', 'flood');
    const b = await link(url, 'tok-calm-bench', 'calm');
    await sleep(300);
    const rssBefore = rss();
    // The probe runs in a process of its own: this one is busy sending the burst and would time
    // its own event loop, not the hub's.
    const prober = spawn(
      process.execPath,
      [
        '-e',
        `
      const lat = []; let on = true; process.stdin.on('data', () => { on = false; });
      (async () => { while (on) { const t = performance.now();
        const ok = await fetch('${url}/healthz', { signal: AbortSignal.timeout(5000) }).then((r) => r.ok, () => false);
        lat.push(ok ? performance.now() - t : 1e9); await new Promise((r) => setTimeout(r, 20)); }
        process.stdout.write(JSON.stringify(lat)); process.exit(0); })();`,
      ],
      { stdio: ['pipe', 'pipe', 'inherit'] },
    );
    let probeOut = '';
    prober.stdout.on('data', (d) => (probeOut += d));
    const probe = new Promise<void>((ok) => prober.on('exit', () => ok()));
    const stopProbe = () => prober.stdin.end('stop');
    await sleep(300);
    const N = 5000;
    const t0 = performance.now();
    for (let i = 0; i < N; i++) {
      const e = ev(i);
      a.ws.send(JSON.stringify({ type: 'notify', id: notificationKey(e), event: e }));
    }
    const refusedNow = async () => {
      const text = await (await fetch(`${url}/metrics`, { headers: { authorization: 'Bearer tok-viewer-bench' } })).text();
      return Number(/tma_hub_notify_refused_total\{reason="budget"\} (\d+)/.exec(text)?.[1] ?? 0);
    };
    const acked = () => a.frames.reduce((n, f) => n + (f.type === 'notify_ack' ? (f.ids as string[]).length : 0), 0);
    while (acked() + (await refusedNow()) < N && performance.now() - t0 < 120_000) await sleep(20);
    const allAnsweredMs = performance.now() - t0;
    const calm = ev(1, 'calm');
    const tb = performance.now();
    const from = b.frames.length;
    b.ws.send(JSON.stringify({ type: 'notify', id: notificationKey(calm), event: calm }));
    while (!b.frames.slice(from).some((f) => f.type === 'notify_ack') && performance.now() - tb < 10_000) await sleep(2);
    const calmAckMs = performance.now() - tb;
    await sleep(2000);
    stopProbe();
    await probe;
    const lat = JSON.parse(probeOut) as number[];
    const acks = acked();
    const refused = await refusedNow();
    const told = a.frames.filter((f) => f.type === 'error' && f.code === 'rate-limited').length;
    const sorted = [...lat].sort((x, y) => x - y);
    console.log('phase 1: 5,000 notify frames from one host token, one burst, real hub process, 3 sinks (1 failing)');
    console.log(`  all 5,000 answered in ${allAnsweredMs.toFixed(0)} ms: ${acks} acknowledged, ${refused} refused (${told} rate-limited error frames)`);
    console.log(
      `  /healthz: ${lat.length} probes, median ${sorted[Math.floor(sorted.length / 2)]!.toFixed(1)} ms, worst ${sorted[sorted.length - 1]!.toFixed(1)} ms`,
    );
    console.log(`  other host's notify acknowledged in ${calmAckMs.toFixed(1)} ms; its link ${b.ws.readyState === WebSocket.OPEN ? 'open' : 'CLOSED'}`);
    console.log(`  hub RSS ${rssBefore.toFixed(0)} MB before, ${rss().toFixed(0)} MB after (ratio ${(rss() / rssBefore).toFixed(2)})`);
    a.ws.terminate();
    b.ws.terminate();
  } finally {
    hub.kill('SIGKILL');
    sink.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function ordinary(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'tma-bench-journal-'));
  const path = join(dir, 'j.jsonl');
  const sink = (name: string): NotifySinkConfig => ({
    name,
    kind: 'webhook',
    url: 'http://x',
    command: null,
    secret: null,
    on: ['blocked'],
    hosts: null,
    pageUrl: null,
  });
  const hub = new HubNotifier({
    journalPath: path,
    logger: pino({ level: 'silent' }),
    context: { hubUrl: 'http://hub' },
    sinks: [sink('a'), sink('b'), sink('down')],
    timing: { groupMs: 5, retryBaseMs: 20, retryCapMs: 50, retryForMs: 3_600_000 },
    // Ordinary traffic from many hosts: the per-host budget is not what is measured here.
    budget: new FrameBudget(1e12, 1e12),
    deliver: async (s) => {
      if (s.name === 'down') throw new Error('HTTP 503');
    },
  });
  const marks = [2000, 5000, 10_000, 20_000];
  let base: { lines: number; writes: number; fsyncs: number } | null = null;
  // Lines per notification since the previous mark: past the unfinished bound every notification
  // also gives one up (a drop line), so the steady state is the second interval on.
  let prev = { n: 0, lines: 0 };
  console.log('phase 2: 20,000 notifications (bursts of 50), three sinks, "down" failing throughout');
  let done = 0;
  for (const m of marks) {
    for (; done < m; done += 50) {
      await Promise.all(Array.from({ length: 50 }, (_, k) => hub.receive(`h${(done + k) % 7}`, ev(done + k, `h${(done + k) % 7}`))));
      await sleep(1);
    }
    await sleep(100);
    const s = hub.journalStats();
    const per = { lines: s.lines / m, writes: (s.appendWrites + s.compactions) / m, fsyncs: s.fsyncs / m };
    base ??= per;
    const marginal = (s.lines - prev.lines) / (m - prev.n);
    prev = { n: m, lines: s.lines };
    console.log(
      `  after ${String(m).padStart(6)}: per notification ${per.lines.toFixed(2)} lines (×${(per.lines / base.lines).toFixed(2)}; ${marginal.toFixed(2)} since the last mark), ` +
        `${per.writes.toFixed(3)} writes (×${(per.writes / base.writes).toFixed(2)}), ${per.fsyncs.toFixed(3)} fsyncs (×${(per.fsyncs / base.fsyncs).toFixed(2)}); ` +
        `rewrites ${s.compactions} (${(s.compactedLines / s.lines).toFixed(2)} lines per line appended); file ${(statSync(path).size / 1024).toFixed(0)} KiB, ` +
        `${s.fileLines} lines; entries ${s.entries}, unfinished ${s.unfinished}`,
    );
  }
  console.log(
    `  ${hub
      .metricsText()
      .split('\n')
      .filter((l) => /dropped_total\{sink="down"\}|sent_total\{sink="a"\}/.test(l))
      .join('; ')}`,
  );
  hub.close();
  rmSync(dir, { recursive: true, force: true });
}

await flood();
await ordinary();
