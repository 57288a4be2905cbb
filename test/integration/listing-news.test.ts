// A collector whose timed sweep is a minute away still follows what changes without any pane
// painting: a pane closed, a window closed, the server dying, and a new server on the same socket.
// Only the output clients' listing news (%layout-change, %window-close, …) and their ending can
// wake it this soon; without those triggers each of these waits for the sweep.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { REPO, ScratchTmux, waitFor } from '../support/scratch-tmux.js';
import { FakeHub, type HubConn } from './fake-hub.js';

let scratch: ScratchTmux | null = null;
let hub: FakeHub | null = null;
let child: ChildProcess | null = null;
let dir = '';

afterEach(async () => {
  child?.kill('SIGKILL');
  child = null;
  await hub?.close();
  hub = null;
  scratch?.kill();
  scratch = null;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

type Frame = Record<string, unknown> & { type: string };

async function collector(name: string): Promise<HubConn> {
  dir = mkdtempSync(join(tmpdir(), 'tma-listing-news-'));
  const tokenFile = join(dir, 'token');
  writeFileSync(tokenFile, 'secret-token-1\n');
  const env = { ...process.env, TMUX: '', TMUX_PANE: '', XDG_RUNTIME_DIR: join(dir, 'run'), XDG_CONFIG_HOME: join(dir, 'cfg') };
  hub = await FakeHub.start({ token: 'secret-token-1', welcome: () => null });
  // --interval 60: no timed cycle within any of these tests.
  child = spawn(
    process.execPath,
    [join(REPO, 'bin/tma.js'), 'collector', '--hub', `ws://127.0.0.1:${hub.port}`, '--token-file', tokenFile, '--socket-name', name, '--interval', '60', '--host-name', 'box'],
    { env, stdio: ['ignore', 'ignore', 'ignore'] },
  );
  const h = hub;
  await waitFor(() => h.conns[0]?.frames.some((f) => f.frame.type === 'snapshot') === true, 'first snapshot', 15_000);
  return h.conns[0]!;
}

/** The pane's row as the frames so far leave it: present (with its state) or not. */
function rowState(conn: HubConn, pane: string): string | null {
  let s: string | null = null;
  for (const f of conn.frames) {
    const frame = f.frame as Frame;
    if (frame.type === 'snapshot') {
      s = null;
      for (const srv of frame.servers as { rows: { pane: string; state: string }[] }[]) for (const r of srv.rows) if (r.pane === pane) s = r.state;
    } else if (frame.type === 'delta') {
      if ((frame.removals as string[]).includes(pane)) s = null;
      for (const r of frame.upserts as { pane: string; state: string }[]) if (r.pane === pane) s = r.state;
    } else if (frame.type === 'server' && frame.event !== 'appeared') {
      s = null;
    }
  }
  return s;
}

/** When the first frame since `since` that passes `test` arrived. */
const frameAt = (conn: HubConn, test: (f: Frame) => boolean, since = 0) => conn.frames.find((f) => f.at >= since && test(f.frame as Frame))?.at;

it('a closed pane and a closed window leave the rows at once, not at the next sweep', async () => {
  scratch = new ScratchTmux('lnp');
  const s = scratch;
  const first = s.start();
  await s.standIn(first, 'claude', 'claude-working.txt');
  // A second pane in the same window (its close is a %layout-change), and one in a window of its own.
  const split = s.tmux('split-window', '-d', '-t', first, '-P', '-F', '#{pane_id}', `bash --rcfile ${join(s.dir, 'rc')} --noprofile -i`).trim();
  await s.standIn(split, 'claude', 'claude-idle.txt');
  const alone = s.newPane();
  await s.standIn(alone, 'codex', 'codex-working.txt');
  const conn = await collector(s.name);
  await waitFor(() => rowState(conn, split) !== null && rowState(conn, alone) !== null && rowState(conn, first) !== null, 'three rows', 15_000);

  let t0 = Date.now();
  s.tmux('kill-pane', '-t', split);
  await waitFor(() => rowState(conn, split) === null, 'the closed pane\'s row gone', 10_000);
  expect(frameAt(conn, (f) => f.type === 'delta' && (f.removals as string[]).includes(split), t0)! - t0).toBeLessThan(5_000);

  t0 = Date.now();
  s.tmux('kill-window', '-t', alone);
  await waitFor(() => rowState(conn, alone) === null, 'the closed window\'s row gone', 10_000);
  expect(frameAt(conn, (f) => f.type === 'delta' && (f.removals as string[]).includes(alone), t0)! - t0).toBeLessThan(5_000);
  expect(rowState(conn, first)).toBe('working');
}, 45_000);

it('a dead server is reported gone at once, and a new server on the same socket is followed', async () => {
  scratch = new ScratchTmux('lns');
  const s = scratch;
  const pane = s.start();
  await s.standIn(pane, 'claude', 'claude-working.txt');
  const conn = await collector(s.name);
  await waitFor(() => rowState(conn, pane) === 'working', 'working row', 15_000);

  const t0 = Date.now();
  // As a crash would: the server ends with its clients attached (SIGKILL, should kill-server race one).
  const pid = Number(s.tmux('display-message', '-p', '#{pid}').trim());
  s.tmux('kill-server');
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Already gone: the usual case.
  }
  await waitFor(() => frameAt(conn, (f) => f.type === 'server' && f.event === 'gone') !== undefined, 'server gone', 15_000);
  expect(frameAt(conn, (f) => f.type === 'server' && f.event === 'gone')! - t0).toBeLessThan(5_000);

  // The same socket name, a new server and a new agent: followed without waiting for the sweep.
  const t1 = Date.now();
  const again = s.start();
  await s.standIn(again, 'codex', 'codex-working.txt');
  await waitFor(() => rowState(conn, again) === 'working', 'the new server\'s working row', 15_000);
  // Pane ids start over on a new server: only frames since the restart count.
  const upserted = (f: Frame) => f.type === 'delta' && (f.upserts as { pane: string }[]).some((r) => r.pane === again);
  expect(frameAt(conn, upserted, t1)! - t1).toBeLessThan(10_000);
}, 45_000);
