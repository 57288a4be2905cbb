import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { REPO, waitFor } from '../support/scratch-tmux.js';
import { FakeHub } from './fake-hub.js';

let dir = '';
let hub: FakeHub | null = null;
let child: ChildProcess | null = null;
const sockets: string[] = [];
/** Server pids by socket: kill-server racing a control client can leave a server with no socket. */
const pids: number[] = [];

const tmux = (sock: string, ...args: string[]) =>
  execFileSync('tmux', ['-u', '-S', sock, '-f', '/dev/null', ...args], { encoding: 'utf8', timeout: 5000, env: { ...process.env, TMUX: '' } });

function startServer(sock: string): void {
  sockets.push(sock);
  tmux(sock, 'new-session', '-d', '-s', 'main', 'sh');
  pids.push(Number(tmux(sock, 'display-message', '-p', '#{pid}').trim()));
}

afterEach(async () => {
  child?.kill('SIGKILL');
  child = null;
  await hub?.close();
  hub = null;
  for (const s of sockets.splice(0)) spawnSync('tmux', ['-S', s, 'kill-server'], { timeout: 5000 });
  for (const pid of pids.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone: the usual case.
    }
  }
  if (dir) rmSync(dir, { recursive: true, force: true });
});

type Frame = Record<string, unknown> & { type: string };

/** A collector with no socket flags, finding servers under `dir`, publishing to a fake hub. */
async function startCollector(): Promise<() => Frame[]> {
  const tokenFile = join(dir, 'token');
  writeFileSync(tokenFile, 'tok');
  const h = (hub = await FakeHub.start({ token: 'tok' }));
  child = spawn(process.execPath, [join(REPO, 'bin/tma.js'), 'collector', '--hub', `ws://127.0.0.1:${h.port}`, '--token-file', tokenFile], {
    env: { ...process.env, TMUX: '', TMUX_TMPDIR: dir, XDG_RUNTIME_DIR: join(dir, 'run'), XDG_CONFIG_HOME: join(dir, 'cfg') },
    stdio: ['ignore', 'ignore', 'ignore'],
  });
  return () => (h.conns[0]?.frames ?? []).map((f) => f.frame as Frame);
}

it('follows every server in the socket directory: skips stale sockets, picks up new ones, reports gone ones', async () => {
  dir = mkdtempSync(join(tmpdir(), 'tma-discovery-'));
  const sockDir = join(dir, `tmux-${process.getuid?.() ?? 0}`);
  mkdirSync(sockDir, { mode: 0o700 });
  const a = join(sockDir, 'alpha');
  const b = join(sockDir, 'beta');
  const stale = join(sockDir, 'stale');
  startServer(stale);
  tmux(stale, 'kill-server');
  await waitFor(() => spawnSync('tmux', ['-S', stale, 'list-sessions']).status !== 0, 'stale server to exit');
  // tmux 3.3a leaves the socket file of an exited server behind: a file that refuses connections.
  expect(existsSync(stale)).toBe(true);
  startServer(a);

  const frames = await startCollector();

  await waitFor(() => frames().some((f) => f.type === 'snapshot'), 'snapshot', 10_000);
  const snap = frames().find((f) => f.type === 'snapshot')!;
  const servers = snap.servers as { server: string; incarnation: string }[];
  expect(servers.map((s) => s.server)).toEqual([a]);
  const pidA = tmux(a, 'display-message', '-p', '#{pid}').trim();
  expect(servers[0]!.incarnation).toMatch(new RegExp(`^${pidA}-\\d+$`));

  // A server started later is found by the rescan.
  startServer(b);
  await waitFor(() => frames().some((f) => f.type === 'server' && f.event === 'appeared' && f.server === b), 'beta appeared', 8000);

  // A server that goes away is reported gone, with the incarnation it had.
  tmux(a, 'kill-server');
  await waitFor(() => frames().some((f) => f.type === 'server' && f.event === 'gone'), 'alpha gone', 8000);
  const gone = frames().filter((f) => f.type === 'server' && f.event === 'gone');
  expect(gone).toEqual([expect.objectContaining({ server: a, incarnation: servers[0]!.incarnation })]);
  expect(frames().some((f) => JSON.stringify(f).includes(stale))).toBe(false);
});

it('a server restarted behind the same socket is a new incarnation, its old rows void', async () => {
  dir = mkdtempSync(join(tmpdir(), 'tma-discovery-'));
  const sockDir = join(dir, `tmux-${process.getuid?.() ?? 0}`);
  mkdirSync(sockDir, { mode: 0o700 });
  const a = join(sockDir, 'alpha');
  startServer(a);
  const frames = await startCollector();
  await waitFor(() => frames().some((f) => f.type === 'snapshot'), 'snapshot', 10_000);
  const first = (frames().find((f) => f.type === 'snapshot')!.servers as { incarnation: string }[])[0]!.incarnation;

  tmux(a, 'kill-server');
  await waitFor(() => spawnSync('tmux', ['-S', a, 'list-sessions']).status !== 0, 'alpha to exit');
  startServer(a);
  const pid = tmux(a, 'display-message', '-p', '#{pid}').trim();
  // Whether the collector saw the gap (gone, then appeared) or only the new pid (incarnation),
  // the socket path now names a new lifetime, never the old one.
  await waitFor(
    () => frames().some((f) => f.type === 'server' && f.server === a && f.event !== 'gone' && f.incarnation !== first),
    'alpha back as a new incarnation',
    10_000,
  );
  const back = frames()
    .filter((f) => f.type === 'server' && f.server === a && f.event !== 'gone')
    .pop()!;
  expect(back.incarnation).toMatch(new RegExp(`^${pid}-\\d+$`));
  expect(back.incarnation).not.toBe(first);
});
