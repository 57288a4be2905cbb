// The fleet page under a flood: a hub in this process, fake collectors pouring row updates into it
// over real WebSockets, and the page open in headless Chromium on the `mode=changes` stream.
// Per second, it prints the stream lines the page applied, the redraws it made, and its main
// thread's busy time (CDP Performance metrics), at full speed and with the CPU throttled like a
// slow phone; first for a baseline, the same page made to draw on every line as it did before,
// then for the page as served. The counters are added by wrapping the page's own modules as they
// are served. Page CPU is the renderer processes' CPU time from /proc.
//
//   node dist/bench/page.js [updates_per_s=1000] [seconds=6] [rows=500]

import { readdirSync, readFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { chromium, type CDPSession, type Page } from 'playwright-core';
import { pino } from 'pino';
import WebSocket from 'ws';
import { startHub } from '../hub/server.js';
import { atBenchExit } from './scratch-server.js';

const RATE = Number(process.argv[2] ?? 1000);
const SECONDS = Number(process.argv[3] ?? 6);
const ROWS = Number(process.argv[4] ?? 500);
const HOSTS = 10;
const PER_HOST = Math.ceil(ROWS / HOSTS);
const SERVER = '/tmp/tmux-1000/default';
const EPOCH = '0123456789abcdef';
const T0 = Date.now() - 60_000;
const STATES = ['working', 'blocked', 'idle'] as const;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function row(host: string, i: number, n: number): Record<string, unknown> {
  const state = STATES[(i + n) % 3]!;
  return {
    pane: `%${i}`,
    agent: 'claude',
    state,
    detail: state === 'blocked' ? 'permission' : null,
    since: T0 + n,
    since_ms: T0 + n,
    episode_ms: T0 + n,
    locator: `s${i % 9}:${i}.0`,
    attention: false,
    done: false,
    session: null,
    transcript: null,
    permission_request: null,
    stamped_at_ms: T0 + n,
    context: null,
    context_at_ms: null,
    muted: false,
    tokens: null,
    quota: null,
    cost_usd: null,
    repo: 'tma',
    branch: `b${n % 5}`,
    worktree: null,
    pending_tool: null,
    pending_call: null,
    pending_summary: null,
    server: SERVER,
    host,
  };
}

async function collector(url: string, host: string): Promise<{ ws: WebSocket; seq: number }> {
  const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/v1/collect`, { headers: { authorization: `Bearer tok-${host}` } });
  await new Promise((res, rej) => ws.once('open', res).once('error', rej));
  const welcome = new Promise((res) => ws.on('message', (d) => String(d).includes('"welcome"') && res(null)));
  ws.send(JSON.stringify({ type: 'hello', protocol: 1, host, collector_version: '0.1.0-bench', epoch: EPOCH, actions_allowed: [] }));
  await welcome;
  const rows = Array.from({ length: PER_HOST }, (_, i) => row(host, i, 0));
  ws.send(JSON.stringify({ type: 'snapshot', epoch: EPOCH, seq: 1, complete: true, servers: [{ server: SERVER, incarnation: 'i1', rows }] }));
  return { ws, seq: 1 };
}

/** Counts the page's redraws (FleetView.render) and applied stream lines (FleetMirror.apply). */
async function instrument(page: Page, perLine: boolean): Promise<void> {
  // The baseline: the page as it was before it drew once per frame, drawing on every line.
  if (perLine) {
    await page.route('**/web/page.js', async (r) => {
      const res = await r.fetch();
      const body = await res.text();
      if (!body.includes('drawSoon.request();')) throw new Error('page.js no longer has the per-frame request this baseline replaces');
      await r.fulfill({ response: res, body: body.replace('drawSoon.request();', 'draw();') });
    });
  }
  const wrap = (cls: string, method: string, counter: string) =>
    `\n{ const f = ${cls}.prototype.${method}; ${cls}.prototype.${method} = function (...a) { globalThis.${counter} = (globalThis.${counter} ?? 0) + 1; ` +
    `const t = performance.now(); try { return f.apply(this, a); } finally { globalThis.${counter}Ms = (globalThis.${counter}Ms ?? 0) + performance.now() - t; } }; }\n`;
  await page.route('**/web/view.js', async (r) => {
    const res = await r.fetch();
    await r.fulfill({ response: res, body: (await res.text()) + wrap('FleetView', 'render', '__renders') });
  });
  await page.route('**/web/changes.js', async (r) => {
    const res = await r.fetch();
    await r.fulfill({ response: res, body: (await res.text()) + wrap('FleetMirror', 'apply', '__lines') });
  });
}

/**
 * CPU ms used so far by the browser's processes: [renderers, all of them]. The browser is this
 * process's descendant; its renderers are forked away from it, so they are found by the profile
 * folder on their command line.
 */
function browserCpuMs(): [number, number] {
  const procs = new Map<number, { ppid: number; cpu: number; cmd: string }>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const f = readFileSync(`/proc/${d}/stat`, 'utf8').split(') ')[1]!.split(' ');
      procs.set(Number(d), { ppid: Number(f[1]), cpu: ((Number(f[11]) + Number(f[12])) * 1000) / 100, cmd: readFileSync(`/proc/${d}/cmdline`, 'utf8') });
    } catch {
      // gone meanwhile
    }
  }
  const mine = (pid: number): boolean =>
    pid !== process.pid && pid > 1 && procs.has(pid) && (procs.get(pid)!.ppid === process.pid || mine(procs.get(pid)!.ppid));
  let profile: string | null = null;
  for (const [pid, p] of procs) if (mine(pid)) profile ??= /--user-data-dir=[^\0]+/.exec(p.cmd)?.[0] ?? null;
  let renderers = 0;
  let all = 0;
  for (const [pid, p] of procs) {
    if (!mine(pid) && !(profile && p.cmd.includes(profile))) continue;
    all += p.cpu;
    if (p.cmd.includes('--type=renderer')) renderers += p.cpu;
  }
  return [renderers, all];
}

interface Sample {
  at: number;
  renders: number;
  renderMs: number;
  rendererCpu: number;
  browserCpu: number;
  lines: number;
  task: number;
  script: number;
  layout: number;
  style: number;
  heap: number;
}

async function sample(page: Page, cdp: CDPSession): Promise<Sample> {
  const { metrics } = await cdp.send('Performance.getMetrics');
  const m = (n: string) => metrics.find((x) => x.name === n)?.value ?? 0;
  const c = await page.evaluate<[number, number, number]>('[globalThis.__renders ?? 0, globalThis.__lines ?? 0, globalThis.__rendersMs ?? 0]');
  const [rendererCpu, browserCpu] = browserCpuMs();
  return {
    rendererCpu,
    browserCpu,
    at: performance.now(),
    renders: c[0],
    renderMs: c[2],
    lines: c[1],
    task: m('TaskDuration'),
    script: m('ScriptDuration'),
    layout: m('LayoutDuration'),
    style: m('RecalcStyleDuration'),
    heap: m('JSHeapUsedSize'),
  };
}

let hubPauses = 0;

async function main(): Promise<void> {
  const hosts = Array.from({ length: HOSTS }, (_, i) => `h${i}`);
  const hub = await startHub({
    config: {
      listen: { host: '127.0.0.1', port: 0 },
      staleAfterMs: null,
      lostAfterMs: 86_400_000,
      collectors: hosts.map((h) => ({ host: h, token: `tok-${h}` })),
      clients: [{ name: 'bench', token: 'tok-viewer', role: 'viewer' }],
      ssh: [],
    },
    // Kept at info only to count the hub pausing the page's stream (a reader that fell behind).
    logger: pino(
      { level: 'info' },
      new Writable({
        write(chunk: Buffer, _enc, cb) {
          const line = String(chunk);
          if (line.includes('subscriber behind; paused')) hubPauses++;
          else if (/"level":(4|5)0/.test(line)) process.stderr.write(line);
          cb();
        },
      }),
    ),
    heartbeatMs: 1000,
  });
  atBenchExit(() => void hub.close());
  const links = await Promise.all(hosts.map((h) => collector(hub.url, h)));
  const beat = setInterval(() => links.forEach((l) => l.ws.send(JSON.stringify({ type: 'heartbeat', at: Date.now() }))), 500);
  while (hub.store.rows().length < PER_HOST * HOSTS) await sleep(20);

  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'],
  });
  atBenchExit(() => void browser.close());
  let page!: Page;
  let cdp!: CDPSession;
  const open = async (perLine: boolean) => {
    await page?.close();
    page = await browser.newPage({ viewport: { width: 1100, height: 760 } });
    await instrument(page, perLine);
    await page.goto(`${hub.url}/#token=tok-viewer`);
    while ((await page.locator('#hosts .agent-row').count()) !== PER_HOST * HOSTS) await sleep(200);
    cdp = await page.context().newCDPSession(page);
    await cdp.send('Performance.enable');
  };

  let n = 0;
  const flood = async (seconds: number) => {
    // Every 10 ms, RATE/100 rows change, spread over the hosts in one delta per host.
    const perTick = Math.max(1, Math.round(RATE / 100));
    const end = performance.now() + seconds * 1000;
    let next = performance.now();
    while (performance.now() < end) {
      n += 1;
      const byHost = new Map<number, Record<string, unknown>[]>();
      for (let k = 0; k < perTick; k++) {
        const g = (n * perTick + k) % (PER_HOST * HOSTS);
        const h = g % HOSTS;
        if (!byHost.has(h)) byHost.set(h, []);
        byHost.get(h)!.push(row(hosts[h]!, Math.floor(g / HOSTS), n));
      }
      for (const [h, rows] of byHost) {
        const l = links[h]!;
        l.ws.send(JSON.stringify({ type: 'delta', epoch: EPOCH, seq: ++l.seq, server: SERVER, incarnation: 'i1', upserts: rows, removals: [] }));
      }
      next += 10;
      await sleep(Math.max(0, next - performance.now()));
    }
  };

  const phase = async (label: string, throttle: number) => {
    await cdp.send('Emulation.setCPUThrottlingRate', { rate: throttle });
    await flood(1); // settle into the flood
    const a = await sample(page, cdp);
    const pausesBefore = hubPauses;
    await flood(SECONDS);
    const b = await sample(page, cdp);
    // How far behind the flood the page was: time until it stops applying lines once the flood ends.
    const stopped = performance.now();
    let seen = b.lines;
    let quietSince = stopped;
    let settled = stopped;
    while (performance.now() - quietSince < 600 && performance.now() - stopped < 30_000) {
      await sleep(50);
      const now = (await sample(page, cdp)).lines;
      if (now !== seen) {
        seen = now;
        settled = performance.now();
        quietSince = settled;
      }
    }
    const s = (b.at - a.at) / 1000;
    const per = (k: keyof Sample) => (b[k] - a[k]) / s;
    console.log(
      `${label.padEnd(22)} lines/s ${per('lines').toFixed(1).padStart(6)}  redraws/s ${per('renders').toFixed(1).padStart(6)}  ` +
        `in redraws ${(per('renderMs') / 10).toFixed(1).padStart(5)}%  page CPU ${(per('rendererCpu') / 10).toFixed(1).padStart(5)}% ` +
        `(all browser processes ${(per('browserCpu') / 10).toFixed(1)}%)  main thread busy ${(per('task') * 100).toFixed(1).padStart(5)}%  (script ${(per('script') * 100).toFixed(1)}%, layout ${(per('layout') * 100).toFixed(1)}%, ` +
        `style ${(per('style') * 100).toFixed(1)}%)  heap ${(b.heap / 1e6).toFixed(1)} MB  behind by ${(settled - stopped).toFixed(0)} ms at the end, paused by the hub ${hubPauses - pausesBefore}×`,
    );
    await cdp.send('Emulation.setCPUThrottlingRate', { rate: 1 });
    await sleep(1500);
  };

  if (process.env.TMA_PAGE_PROFILE) {
    await open(false);
    await cdp.send('Profiler.enable');
    await cdp.send('Profiler.start');
    await flood(3);
    const { profile } = await cdp.send('Profiler.stop');
    const self = new Map<string, number>();
    const dt = new Map<number, number>();
    profile.samples?.forEach((id, i) => dt.set(id, (dt.get(id) ?? 0) + (profile.timeDeltas?.[i] ?? 0)));
    for (const node of profile.nodes) {
      const k = `${node.callFrame.functionName || '(anon)'} ${node.callFrame.url.split('/').pop()}:${node.callFrame.lineNumber}`;
      self.set(k, (self.get(k) ?? 0) + (dt.get(node.id) ?? 0) / 1000);
    }
    for (const [k, ms] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 15)) console.log(`${ms.toFixed(0).padStart(6)} ms  ${k}`);
  }
  console.log(`page bench: ${PER_HOST * HOSTS} rows on ${HOSTS} hosts, ${RATE} row updates/s, ${SECONDS} s per phase, hub coalescing 50 ms`);
  for (const perLine of [true, false]) {
    await open(perLine);
    console.log(perLine ? 'baseline: the same page drawing once per stream line' : 'the page as served: once per frame');
    await phase('  full speed', 1);
    await phase('  CPU throttled 4x', 4);
    // Make sure the page is still the hub's fleet after all that.
    await sleep(1000);
    const have = await page.evaluate<number>(`document.querySelectorAll('#hosts .agent-row').length`);
    console.log(`  rows shown ${have} of ${PER_HOST * HOSTS}`);
  }
  clearInterval(beat);
  for (const l of links) l.ws.terminate();
  await browser.close();
  await hub.close();
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
