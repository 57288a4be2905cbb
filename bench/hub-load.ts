// The load side of bench/hub: collectors that can offer tens of thousands of row updates a second
// from a few processes, and subscribers that time what reaches them. Each generator process owns
// a share of the hosts; every row's JSON is encoded once, and an update only splices its state,
// token counter and send time into that text. Several rows of one host travel in one delta frame,
// as a collector's cycle sends them, and the rate counts rows, not frames.

import { monitorEventLoopDelay } from 'node:perf_hooks';
import { WebSocket } from 'ws';
import { HEARTBEAT_MS } from '../shared/protocol.js';
import { protocolRowObject, type ProtocolRow } from '../shared/row.js';

export const PANES = 20;
export const EPOCH = 'b3c4d5e6f708192a';
export const SERVER = '/tmp/tmux-1000/default';
const STATES = ['working', 'blocked', 'idle'] as const;

export function benchRow(host: string, i: number, state: ProtocolRow['state'], repo = 'fleet', tokens = 12345): ProtocolRow {
  return protocolRowObject({
    pane: `%${i}`,
    agent: 'claude',
    state,
    detail: null,
    since: 1_700_000_000_000,
    since_ms: 1_700_000_000_000,
    episode_ms: 1_700_000_000_000,
    locator: `work:${i}.0`,
    attention: false,
    done: false,
    session: null,
    transcript: null,
    permission_request: null,
    stamped_at_ms: 1_700_000_000_000,
    context: 42,
    context_at_ms: null,
    muted: false,
    tokens,
    quota: null,
    cost_usd: 0.5,
    repo,
    branch: 'main',
    worktree: false,
    pending_tool: null,
    pending_call: null,
    pending_summary: null,
    server: SERVER,
    host,
  });
}

export const pct = (xs: number[], p: number) => (xs.length ? [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]! : NaN);

/** A row's JSON cut where an update varies it: state, tokens, repo (which carries the send time). */
function rowTemplate(host: string, pane: number): string[] {
  const text = JSON.stringify(benchRow(host, pane, 'idle', '@@', 0));
  const parts = text.replace('"state":"idle"', '"state":"@@"').replace('"tokens":0', '"tokens":@@').split('@@');
  if (parts.length !== 4) throw new Error('row template did not split into four parts');
  return parts;
}

export interface GeneratorStart {
  url: string;
  hosts: { host: string; token: string }[];
  /** Share of row updates that change the row's state class (an edge). */
  share: number;
  /**
   * Loopback source addresses to spread the links over (127.0.0.X), for a hub run as it ships: it
   * holds at most 256 connections per address. Default: the system's choice.
   */
  localAddresses?: string[];
}

export async function generator(o: GeneratorStart): Promise<void> {
  const sockets: WebSocket[] = [];
  const seqs = new Array<number>(o.hosts.length).fill(0);
  const states = o.hosts.map(() => new Array<number>(PANES).fill(0));
  const templates = o.hosts.map(({ host }) => Array.from({ length: PANES }, (_, i) => rowTemplate(host, i)));
  const head = `{"type":"delta","epoch":"${EPOCH}","seq":`;
  const mid = `,"server":${JSON.stringify(SERVER)},"incarnation":"i1","upserts":[`;
  const tail = '],"removals":[]}';
  await Promise.all(
    o.hosts.map(
      ({ host, token }, k) =>
        new Promise<void>((resolve, reject) => {
          const ws = new WebSocket(`${o.url.replace(/^http/, 'ws')}/v1/collect`, {
            headers: { authorization: `Bearer ${token}` },
            perMessageDeflate: false,
            ...(o.localAddresses?.length ? { localAddress: o.localAddresses[k % o.localAddresses.length] } : {}),
          });
          sockets[k] = ws;
          ws.once('error', reject);
          ws.on('message', (d) => {
            if ((JSON.parse(String(d)) as { type: string }).type !== 'welcome') return;
            const rows = Array.from({ length: PANES }, (_, i) => benchRow(host, i, 'working'));
            ws.send(JSON.stringify({ type: 'snapshot', epoch: EPOCH, seq: 0, complete: true, servers: [{ server: SERVER, incarnation: 'i1', rows }] }));
            resolve();
          });
          ws.once('open', () => ws.send(JSON.stringify({ type: 'hello', protocol: 1, host, collector_version: 'bench', epoch: EPOCH, actions_allowed: [] })));
        }),
    ),
  );
  // Heartbeats keep the links alive between phases, as a real collector's do.
  setInterval(() => {
    const at = Date.now();
    sockets.forEach((ws, k) => ws.send(`{"type":"heartbeat","at":${at},"seq":${seqs[k]}}`));
  }, HEARTBEAT_MS).unref();
  process.send!({ ready: true });
  let next = 0;
  let paneCursor = 0;
  // eslint-disable-next-line @typescript-eslint/no-misused-promises -- a bench child: a rejection that ends it is the wanted failure
  process.on('message', async (m: { rate: number; secs: number; batch: number }) => {
    const batch = Math.min(m.batch, PANES);
    let rows = 0;
    let classChanges = 0;
    const started = Date.now();
    let behindMax = 0;
    await new Promise<void>((resolve) => {
      const timer = setInterval(() => {
        const elapsed = Date.now() - started;
        if (elapsed >= m.secs * 1000) {
          clearInterval(timer);
          resolve();
          return;
        }
        // Catch up to the offered rate by the clock, so a late tick sends its share.
        const due = (m.rate * elapsed) / 1000 - rows;
        behindMax = Math.max(behindMax, due);
        const now = String(Date.now());
        for (let owed = due; owed >= batch; owed -= batch) {
          const k = next++ % o.hosts.length;
          const seq = ++seqs[k]!;
          const parts: string[] = [];
          for (let b = 0; b < batch; b++) {
            const pane = paneCursor++ % PANES;
            if (Math.random() < o.share) {
              states[k]![pane] = (states[k]![pane]! + 1) % STATES.length;
              classChanges++;
            }
            const t = templates[k]![pane]!;
            parts.push(t[0] + STATES[states[k]![pane]!]! + t[1] + seq + t[2] + 't' + now + t[3]);
          }
          sockets[k]!.send(head + seq + mid + parts.join(',') + tail);
          rows += batch;
        }
      }, 5);
    });
    process.send!({ rows, classChanges, secs: (Date.now() - started) / 1000 });
  });
}

/**
 * Subscribers in one process; only one stream per mode samples latency. Nothing heavy runs here
 * (the `/v1/agents` reads have a process of their own, bench/hub-reader.ts), and the process's own
 * event-loop delay is reported so a stall of the sampler shows as such, not as the hub's.
 */
export async function subscribers(url: string, token: string): Promise<void> {
  let open: { ws: WebSocket; mode: string }[] = [];
  const lat: Record<string, number[]> = { events: [], changes: [], remote: [] };
  /** Hosts `c<k>` with `k % hubs !== index` are linked to another hub: their edges crossed NATS. */
  let spread: { hubs: number; index: number } | null = null;
  let closedEarly = 0;
  const sampler = new Map<string, WebSocket>();
  const loop = monitorEventLoopDelay({ resolution: 5 });
  loop.enable();
  const connect = (mode: string) =>
    new Promise<void>((resolve, reject) => {
      const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/v1/subscribe?mode=${mode}`, {
        headers: { authorization: `Bearer ${token}` },
        perMessageDeflate: false,
      });
      let first = true;
      if (!sampler.has(mode)) sampler.set(mode, ws);
      ws.on('message', (d) => {
        if (first) {
          first = false;
          return resolve();
        }
        if (sampler.get(mode) !== ws) return;
        const now = Date.now();
        const s = String(d);
        if (mode === 'events') {
          const e = JSON.parse(s) as { repo: string; host?: string };
          const ms = now - Number(e.repo.slice(1));
          lat.events!.push(ms);
          const k = spread && e.host ? Number(e.host.slice(1)) : NaN;
          if (spread && k % spread.hubs !== spread.index) lat.remote!.push(ms);
        } else if (mode === 'changes') {
          const c = JSON.parse(s) as { upserts?: { repo: string }[] };
          for (const u of c.upserts ?? []) lat.changes!.push(now - Number(u.repo.slice(1)));
        }
      });
      ws.on('close', (code) => {
        if (code !== 1000 && code !== 1005) closedEarly++;
      });
      ws.once('error', reject);
      open.push({ ws, mode });
    });
  process.send!({ ready: true });
  // eslint-disable-next-line @typescript-eslint/no-misused-promises -- a bench child: a rejection that ends it is the wanted failure
  process.on('message', async (m: { cmd: string; mix?: Record<string, number>; spread?: { hubs: number; index: number } }) => {
    if (m.cmd === 'open') {
      spread = m.spread ?? null;
      for (const [mode, k] of Object.entries(m.mix!)) for (let i = 0; i < k; i++) await connect(mode);
      lat.events = [];
      lat.changes = [];
      lat.remote = [];
      closedEarly = 0;
      loop.reset();
      process.send!({ ok: true });
    } else if (m.cmd === 'close') {
      const report = {
        events: [...lat.events!],
        changes: [...lat.changes!],
        remote: [...lat.remote!],
        closedEarly,
        loopP99: loop.percentile(99) / 1e6,
        loopMax: loop.max / 1e6,
      };
      for (const o of open) o.ws.close(1000);
      open = [];
      sampler.clear();
      process.send!(report);
    }
  });
}
