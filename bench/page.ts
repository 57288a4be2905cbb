// The fleet page under a flood: a hub in this process, fake collectors pouring row updates into it
// over real WebSockets, and the page open in headless Chromium on the `mode=changes` stream.
// Per second, it prints the stream lines the page applied, the redraws it made, its main thread's
// busy time (CDP Performance metrics) and the update lag (a probe row's text changed every 50 ms,
// timed from the collector's send until a redraw put it in the DOM), at full speed and with the
// CPU throttled like a slow phone; first for a baseline, the page's files as they were at a git
// ref (read with `git show` at bench time, so the old page runs in the same run against the same
// hub), then for the page as served, and the ratios of the two. The counters are added by wrapping
// the page's own modules as they are served. Page CPU is the renderer processes' CPU time from /proc.
//
//   node dist/bench/page.js [updates_per_s=1000] [seconds=6] [rows=500] [baseline_ref]

import { spawnSync } from 'node:child_process';
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
/** The page to compare against: the page as it was before it patched only the rows that changed. */
const BASELINE = process.argv[5] ?? process.env.TMA_PAGE_BASELINE ?? '486fe29cf395e07a09df3c042f44fea6447b55c9';
/** The row whose repo text the bench changes to time how long an update takes to reach the DOM. */
const PROBE = { host: 'h0', pane: '%0' };
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

/** The page's files by URL path, as the hub serves them (hub/web/assets.ts). */
const PAGE_FILE = (path: string): string | null => (path === '/' ? 'index.html' : /^\/web\/[a-z-]+\.(js|css)$/.test(path) ? path.slice(5) : null);

/** A page file as it was at `ref`, read from git, or null when the file did not exist then. */
function fileAt(ref: string, file: string): string | null {
  const r = spawnSync('git', ['show', `${ref}:hub/web/${file}`], { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 });
  return r.status === 0 ? r.stdout : null;
}

/**
 * Serve the page as it was at `baseline` (a git ref) in place of the hub's own files, or the
 * hub's own when null; and count its redraws (FleetView.render, with their time), applied stream
 * lines (FleetMirror.apply), and when each probe text first showed in the DOM, wrapping the page's
 * own modules as they are served.
 */
async function instrument(page: Page, baseline: string | null): Promise<void> {
  const wrap = (cls: string, method: string, counter: string, after = '') =>
    `\n{ const f = ${cls}.prototype.${method}; ${cls}.prototype.${method} = function (...a) { globalThis.${counter} = (globalThis.${counter} ?? 0) + 1; ` +
    `const t = performance.now(); try { return f.apply(this, a); } finally { globalThis.${counter}Ms = (globalThis.${counter}Ms ?? 0) + performance.now() - t; ${after} } }; }\n`;
  // After each redraw: the probe row's text, and the wall-clock time it first appeared.
  const probe =
    `const p = document.querySelector('#hosts [data-host="${PROBE.host}"][data-pane="${PROBE.pane}"] .c-repo')?.textContent ?? ''; ` +
    `if (p !== globalThis.__probe) { globalThis.__probe = p; (globalThis.__seen ??= []).push([p, Date.now()]); }`;
  await page.route(
    (url) => PAGE_FILE(url.pathname) !== null,
    async (r) => {
      const file = PAGE_FILE(new URL(r.request().url()).pathname)!;
      const res = await r.fetch();
      let body = baseline === null ? await res.text() : fileAt(baseline, file);
      if (body === null) return r.fulfill({ status: 404, body: '' });
      if (file === 'view.js') body += wrap('FleetView', 'render', '__renders', probe);
      if (file === 'changes.js') body += wrap('FleetMirror', 'apply', '__lines');
      await r.fulfill({ response: res, body });
    },
  );
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
  /** The main thread's CPU time (s): what it costs the machine, however loaded the machine is. */
  thread: number;
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
    thread: m('ThreadTime'),
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
  const open = async (baseline: string | null) => {
    await page?.close();
    page = await browser.newPage({ viewport: { width: 1100, height: 760 } });
    await instrument(page, baseline);
    await page.goto(`${hub.url}/#token=tok-viewer`);
    while ((await page.locator('#hosts .agent-row').count()) !== PER_HOST * HOSTS) await sleep(200);
    cdp = await page.context().newCDPSession(page);
    await cdp.send('Performance.enable');
  };

  let n = 0;
  /** Probe number → when it was sent (Date.now()). */
  const probes = new Map<number, number>();
  const flood = async (seconds: number) => {
    // Every 10 ms, RATE/100 rows change, spread over the hosts in one delta per host; every 50 ms
    // the probe row alone changes its repo text to the probe's number.
    const perTick = Math.max(1, Math.round(RATE / 100));
    const end = performance.now() + seconds * 1000;
    let next = performance.now();
    while (performance.now() < end) {
      n += 1;
      const byHost = new Map<number, Record<string, unknown>[]>();
      for (let k = 0; k < perTick; k++) {
        const g = (n * perTick + k) % (PER_HOST * HOSTS);
        if (g === 0) continue; // the probe row
        const h = g % HOSTS;
        if (!byHost.has(h)) byHost.set(h, []);
        byHost.get(h)!.push(row(hosts[h]!, Math.floor(g / HOSTS), n));
      }
      if (n % 5 === 0) {
        if (!byHost.has(0)) byHost.set(0, []);
        byHost.get(0)!.push({ ...row(PROBE.host, 0, 0), repo: `probe ${n}`, branch: null });
        probes.set(n, Date.now());
      }
      for (const [h, rows] of byHost) {
        const l = links[h]!;
        l.ws.send(JSON.stringify({ type: 'delta', epoch: EPOCH, seq: ++l.seq, server: SERVER, incarnation: 'i1', upserts: rows, removals: [] }));
      }
      next += 10;
      await sleep(Math.max(0, next - performance.now()));
    }
  };

  /** Update lag of the probes sent in [from, to): until that probe, or a later one, was in the DOM. */
  const lags = async (from: number, to: number): Promise<{ p50: number; p99: number; unseen: number }> => {
    const seen = await page.evaluate<[string, number][]>('globalThis.__seen ?? []');
    const firstAt = new Map<number, number>();
    for (const [text, at] of seen) {
      const k = Number(/^probe (\d+)$/.exec(text)?.[1]);
      if (Number.isFinite(k) && !firstAt.has(k)) firstAt.set(k, at);
    }
    const shown = [...firstAt].sort((a, b) => a[0] - b[0]);
    const out: number[] = [];
    let unseen = 0;
    for (const [k, sent] of probes) {
      if (k < from || k >= to) continue;
      const at = shown.find(([j]) => j >= k)?.[1];
      if (at === undefined) unseen++;
      else out.push(at - sent);
    }
    out.sort((a, b) => a - b);
    const q = (f: number) => out[Math.min(out.length - 1, Math.floor(f * out.length))] ?? NaN;
    return { p50: q(0.5), p99: q(0.99), unseen };
  };

  interface Figures {
    busy: number;
    cpu: number;
    redraws: number;
    lines: number;
    p50: number;
    p99: number;
    behind: number;
  }

  const phase = async (label: string, throttle: number): Promise<Figures> => {
    await cdp.send('Emulation.setCPUThrottlingRate', { rate: throttle });
    await flood(1); // settle into the flood
    const a = await sample(page, cdp);
    const pausesBefore = hubPauses;
    const firstProbe = n + 1;
    await flood(SECONDS);
    const lastProbe = n + 1;
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
    const lag = await lags(firstProbe, lastProbe);
    const s = (b.at - a.at) / 1000;
    const per = (k: keyof Sample) => (b[k] - a[k]) / s;
    console.log(
      `${label.padEnd(22)} lines/s ${per('lines').toFixed(1).padStart(6)}  redraws/s ${per('renders').toFixed(1).padStart(6)}  ` +
        `in redraws ${(per('renderMs') / 10).toFixed(1).padStart(5)}%  page CPU ${(per('rendererCpu') / 10).toFixed(1).padStart(5)}% ` +
        `(all browser processes ${(per('browserCpu') / 10).toFixed(1)}%)  main thread busy ${(per('task') * 100).toFixed(1).padStart(5)}% of the time, on CPU ${(per('thread') * 100).toFixed(1).padStart(5)}% of a core  (script ${(per('script') * 100).toFixed(1)}%, layout ${(per('layout') * 100).toFixed(1)}%, ` +
        `style ${(per('style') * 100).toFixed(1)}%)  update lag p50 ${lag.p50.toFixed(0)} ms p99 ${lag.p99.toFixed(0)} ms${lag.unseen ? ` (${lag.unseen} probes never shown)` : ''}  ` +
        `heap ${(b.heap / 1e6).toFixed(1)} MB  behind by ${(settled - stopped).toFixed(0)} ms at the end, paused by the hub ${hubPauses - pausesBefore}×`,
    );
    await cdp.send('Emulation.setCPUThrottlingRate', { rate: 1 });
    await sleep(1500);
    return { busy: per('task'), cpu: per('thread'), redraws: per('renders'), lines: per('lines'), p50: lag.p50, p99: lag.p99, behind: settled - stopped };
  };

  if (process.env.TMA_PAGE_PROFILE) {
    await open(null);
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
  const results: Record<string, Figures[]> = {};
  const pages: [string, string | null][] = [
    [`baseline: the page as at ${BASELINE}`, BASELINE],
    ['the page as served', null],
  ];
  // `none` as the baseline measures the page as served alone, for a quicker look.
  for (const [name, ref] of BASELINE === 'none' ? pages.slice(1) : pages) {
    await open(ref);
    console.log(name);
    results[ref ?? 'served'] = [await phase('  full speed', 1), await phase('  CPU throttled 4x', 4)];
    // Make sure the page is still the hub's fleet after all that.
    await sleep(1000);
    const have = await page.evaluate<number>(`document.querySelectorAll('#hosts .agent-row').length`);
    console.log(`  rows shown ${have} of ${PER_HOST * HOSTS}`);
  }
  const [oldF, newF] = [results[BASELINE], results.served!];
  if (oldF) {
    console.log('served vs baseline (ratio served / baseline):');
    ['full speed', 'CPU throttled 4x'].forEach((label, i) => {
      const o = oldF[i]!;
      const m = newF[i]!;
      const r = (x: number, y: number) => `${(x / y).toFixed(2)}×`;
      const pc = (x: number) => `${(x * 100).toFixed(1)}%`;
      console.log(
        `  ${label.padEnd(18)} main thread on CPU ${pc(m.cpu)} vs ${pc(o.cpu)} of a core (${r(m.cpu, o.cpu)}), busy ${pc(m.busy)} vs ${pc(o.busy)} of the time (${r(m.busy, o.busy)})  ` +
          `redraws/s ${m.redraws.toFixed(1)} vs ${o.redraws.toFixed(1)} (${r(m.redraws, o.redraws)})  ` +
          `update lag p99 ${m.p99.toFixed(0)} vs ${o.p99.toFixed(0)} ms (${r(m.p99, o.p99)})` +
          (i === 0 ? `  target <= 25% of a core: ${m.cpu <= 0.25 ? 'met' : 'NOT met'}` : ''),
      );
    });
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
