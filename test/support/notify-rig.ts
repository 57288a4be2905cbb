// What the notification end-to-end tests share: a loopback receiver playing an ntfy server and a
// webhook (it keeps every request with its arrival time), a real `tma collector` process on a
// scratch tmux server, and a reader of the hub's rows.

import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FleetDocument, FleetRow } from '../../shared/fleet.js';
import { REPO } from './scratch-tmux.js';

export interface Got {
  at: number;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Receiver {
  url: string;
  got: Got[];
  ntfy(): Got[];
  hooks(): Got[];
  close(): Promise<void>;
}

/** `/ntfy/<topic>` plays ntfy, `/hook` a webhook; both answer 200 while `failing()` is false. */
export async function loopbackReceiver(failing: () => boolean = () => false): Promise<Receiver> {
  const got: Got[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      if (failing()) {
        res.writeHead(503).end();
        return;
      }
      got.push({ at: Date.now(), path: req.url ?? '', headers: req.headers, body });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    got,
    ntfy: () => got.filter((g) => g.path.startsWith('/ntfy')),
    hooks: () => got.filter((g) => g.path.startsWith('/hook')),
    close: () => new Promise<void>((ok) => server.close(() => ok())),
  };
}

/** The state, config and runtime folders of one collector host under `dir`, with its token file. */
export function collectorHome(dir: string, token: string): { env: NodeJS.ProcessEnv; tokenFile: string } {
  for (const d of ['state', 'run', 'cfg']) mkdirSync(join(dir, d), { recursive: true });
  const tokenFile = join(dir, 'token');
  writeFileSync(tokenFile, `${token}\n`);
  return {
    tokenFile,
    env: {
      ...process.env,
      TMUX: '',
      TMUX_PANE: '',
      XDG_STATE_HOME: join(dir, 'state'),
      XDG_RUNTIME_DIR: join(dir, 'run'),
      XDG_CONFIG_HOME: join(dir, 'cfg'),
      TMA_COLLECTOR_HEARTBEAT_MS: '200',
    },
  };
}

export interface Collector {
  child: ChildProcess;
  log(): string;
  /** SIGKILL, and wait until it is gone. */
  kill(): Promise<void>;
}

export function startCollector(o: {
  hubPort: number;
  home: { env: NodeJS.ProcessEnv; tokenFile: string };
  socket: string;
  host: string;
  interval?: string;
}): Collector {
  const child = spawn(
    process.execPath,
    [
      join(REPO, 'bin/tma.js'),
      'collector',
      '--hub',
      `ws://127.0.0.1:${o.hubPort}`,
      '--token-file',
      o.home.tokenFile,
      '--socket-name',
      o.socket,
      '--interval',
      o.interval ?? '0.2',
      '--host-name',
      o.host,
    ],
    { env: o.home.env, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let log = '';
  child.stderr.on('data', (d) => (log += d));
  return {
    child,
    log: () => log,
    kill: () =>
      new Promise<void>((ok) => {
        if (child.exitCode !== null || child.signalCode !== null) return ok();
        child.once('exit', () => ok());
        child.kill('SIGKILL');
      }),
  };
}

/** Poll the hub's rows until one matches `cond`. */
export async function hubRowWhen(get: () => Promise<Response>, cond: (r: FleetRow) => boolean, what: string, timeoutMs = 15_000): Promise<FleetRow> {
  const end = Date.now() + timeoutMs;
  let last: FleetRow[] = [];
  for (;;) {
    const doc = await get()
      .then((r) => r.json() as Promise<FleetDocument>)
      .catch(() => null);
    last = doc?.agents ?? last;
    const hit = last.find(cond);
    if (hit) return hit;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}; rows: ${JSON.stringify(last.map((r) => [r.host, r.pane, r.state, r.episode_ms]))}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The URLs of an ntfy `Actions` header, by label. */
export function ntfyActionUrls(header: string | string[] | undefined): Map<string, { url: string; method: string | undefined }> {
  const out = new Map<string, { url: string; method: string | undefined }>();
  for (const a of String(header ?? '').split(';')) {
    const parts = a.split(',').map((s) => s.trim());
    if (parts[0] !== 'http') continue;
    out.set(parts[1]!, { url: parts[2]!, method: parts.find((p) => p.startsWith('method='))?.slice(7) });
  }
  return out;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
