// Screens seen as they change: a collector on a long poll still publishes a screen-only change
// (no hook) within a second or two, because the pane's %output wakes a look at it; and a static
// screen publishes nothing after its first row, and is not re-stamped either: a collector that
// watches output leaves a static pane's options alone, its per-server heartbeat
// (@tma_collector_at) keeps one-shot readers from recapturing, and a changed screen is still seen.
// What changes without any pane painting is followed as promptly: a pane or window closed, the
// server dying, a new server on the same socket. Only the output clients' listing news
// (%layout-change, %window-close, …) and their ending can wake a collector on a minute's poll.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { REPO, ScratchTmux, tma, waitFor } from '../support/scratch-tmux.js';
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
const rowsIn = (f: Frame): Record<string, unknown>[] =>
  f.type === 'delta'
    ? (f.upserts as Record<string, unknown>[])
    : f.type === 'snapshot'
      ? (f.servers as { rows: Record<string, unknown>[] }[]).flatMap((s) => s.rows)
      : [];

async function collector(name: string, interval: string, extraEnv: Record<string, string> = {}): Promise<HubConn> {
  dir = mkdtempSync(join(tmpdir(), 'tma-screen-output-'));
  const tokenFile = join(dir, 'token');
  writeFileSync(tokenFile, 'secret-token-1\n');
  const env = { ...process.env, TMUX: '', TMUX_PANE: '', XDG_RUNTIME_DIR: join(dir, 'run'), XDG_CONFIG_HOME: join(dir, 'cfg'), ...extraEnv };
  hub = await FakeHub.start({ token: 'secret-token-1', welcome: () => null });
  child = spawn(
    process.execPath,
    [
      join(REPO, 'bin/tma.js'),
      'collector',
      '--hub',
      `ws://127.0.0.1:${hub.port}`,
      '--token-file',
      tokenFile,
      '--socket-name',
      name,
      '--interval',
      interval,
      '--host-name',
      'box',
    ],
    { env, stdio: ['ignore', 'ignore', 'ignore'] },
  );
  const h = hub;
  await waitFor(() => h.conns[0]?.frames.some((f) => f.frame.type === 'snapshot') === true, 'first snapshot', 15_000);
  return h.conns[0]!;
}

it('a screen-only change reaches the hub long before the next poll, though the pane was just stamped', async () => {
  scratch = new ScratchTmux('sco');
  const pane = scratch.start();
  const agent = await scratch.standIn(pane, 'claude', 'claude-working.txt');
  const conn = await collector(scratch.name, '60');
  const stateOf = () => {
    let s: unknown;
    for (const f of conn.frames) for (const r of rowsIn(f.frame as Frame)) if (r.pane === pane) s = r.state;
    return s;
  };
  await waitFor(() => stateOf() === 'working', 'working row', 10_000);
  const t0 = Date.now();
  await agent.paint('claude-permission-dialog.txt');
  // The poll is a minute away and the stamp is seconds old: only the pane's output can wake this.
  await waitFor(() => stateOf() === 'blocked', 'blocked row', 10_000);
  const at = conn.frames.find((f) => rowsIn(f.frame as Frame).some((r) => r.pane === pane && r.state === 'blocked'))!.at;
  expect(at - t0).toBeLessThan(5_000);
});

it('a static screen is published once: neither re-stamped nor re-sent', async () => {
  scratch = new ScratchTmux('scs');
  const pane = scratch.start();
  await scratch.standIn(pane, 'claude', 'claude-working.txt');
  const conn = await collector(scratch.name, '0.5');
  await waitFor(() => conn.frames.some((f) => rowsIn(f.frame as Frame).some((r) => r.pane === pane && r.state === 'working')), 'working row', 10_000);
  const stamped = () => Number(scratch!.option(pane, '@agent_stamped_at') || 0);
  const before = conn.frames.length;
  const firstStamp = stamped();
  // Well past the 3 s freshness window, at which the poll used to renew the stamp: a collector
  // that watches output leaves a stamp that would change nothing alone (see the next test).
  await new Promise((r) => setTimeout(r, 5000));
  expect(stamped()).toBe(firstStamp);
  const later = conn.frames
    .slice(before)
    .map((f) => f.frame as Frame)
    .filter((f) => f.type === 'delta' && rowsIn(f).some((r) => r.pane === pane));
  expect(later).toEqual([]);
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

it('a static agent pane is not re-stamped, one-shot readers still trust it, and a new screen is stamped', async () => {
  scratch = new ScratchTmux('qst');
  const s = scratch;
  const pane = s.start();
  const agent = await s.standIn(pane, 'claude', 'claude-working.txt');
  await collector(s.name, '0.3');
  const env = { XDG_RUNTIME_DIR: join(dir, 'run'), XDG_CONFIG_HOME: join(dir, 'cfg') };
  const beat = () => Number(s.tmux('show-options', '-sqv', '@tma_collector_at').trim() || 0);
  const stampOf = () => s.option(pane, '@agent_stamped_at');
  await waitFor(() => s.option(pane, '@agent_state') === 'working' && beat() > 0, 'working stamp and a heartbeat', 15_000);

  // Every option of the pane, as one text: nothing of it may move while the screen stands still.
  const options = () => s.tmux('show-options', '-p', '-t', pane);
  // The first watched look happens once the first stamp is past the 3 s freshness window.
  await sleep(4000);
  const settled = options();
  const stamp = stampOf();
  const beat0 = beat();
  // Well past the freshness window again, at 0.3 s polling: the old poll re-stamped twice here.
  await sleep(4500);
  expect(stampOf()).toBe(stamp);
  expect(options()).toBe(settled);
  expect(beat()).toBeGreaterThan(beat0);

  // A one-shot reader takes the state from the stamp the heartbeat vouches for: no capture, so no write.
  const ls = await tma(['--socket-name', s.name, 'ls', '--json'], { env });
  expect(ls.code).toBe(0);
  const rows = (JSON.parse(ls.stdout) as { agents: { pane: string; state: string }[] }).agents;
  expect(rows.find((r) => r.pane === pane)?.state).toBe('working');
  expect(stampOf()).toBe(stamp);

  // A screen that changes is still seen, and stamped, within the output watch's reach.
  await agent.paint('claude-permission-dialog.txt');
  await waitFor(() => s.option(pane, '@agent_state') === 'blocked', 'blocked stamp', 10_000);
  expect(Number(stampOf())).toBeGreaterThan(Number(stamp));
}, 60_000);

it('a session opened after the collector started is watched at once, not at the next session sweep', async () => {
  scratch = new ScratchTmux('scn');
  scratch.start();
  // Once `slow` exists, an output client takes 1.5 s to attach: the new session's agent paints its
  // one screen before anyone hears that session, as happens when tmux is slow to start a client.
  const slow = join(scratch.dir, 'slow');
  const bin = join(scratch.dir, 'tmux-slow-attach');
  writeFileSync(bin, `#!/bin/sh\ncase " $* " in *" -C "*) [ -e '${slow}' ] && sleep 1.5;; esac\nexec tmux "$@"\n`, { mode: 0o755 });
  const conn = await collector(scratch.name, '60', { TMA_TMUX_BIN: bin });
  writeFileSync(slow, '');
  // The poll is a minute away and the session list is re-read only every 30 s: the new session's
  // pane is seen this soon only because `%sessions-changed` starts watching it, and what it painted
  // before its client attached is looked at once the client is there.
  const t0 = Date.now();
  const pane = scratch.start('late');
  await scratch.standIn(pane, 'claude', 'claude-working.txt');
  const seen = () => conn.frames.find((f) => rowsIn(f.frame as Frame).some((r) => r.pane === pane && r.state === 'working'));
  await waitFor(() => seen() !== undefined, "the new session's working row", 20_000);
  expect(seen()!.at - t0).toBeLessThan(10_000);
});

// A collector on a minute's poll: what follows needs the output clients' listing news.
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
  const conn = await collector(s.name, '60');
  await waitFor(() => rowState(conn, split) !== null && rowState(conn, alone) !== null && rowState(conn, first) !== null, 'three rows', 15_000);

  let t0 = Date.now();
  s.tmux('kill-pane', '-t', split);
  await waitFor(() => rowState(conn, split) === null, "the closed pane's row gone", 10_000);
  expect(frameAt(conn, (f) => f.type === 'delta' && (f.removals as string[]).includes(split), t0)! - t0).toBeLessThan(5_000);

  t0 = Date.now();
  s.tmux('kill-window', '-t', alone);
  await waitFor(() => rowState(conn, alone) === null, "the closed window's row gone", 10_000);
  expect(frameAt(conn, (f) => f.type === 'delta' && (f.removals as string[]).includes(alone), t0)! - t0).toBeLessThan(5_000);
  expect(rowState(conn, first)).toBe('working');
}, 45_000);

it('a dead server is reported gone at once, and a new server on the same socket is followed', async () => {
  scratch = new ScratchTmux('lns');
  const s = scratch;
  const pane = s.start();
  await s.standIn(pane, 'claude', 'claude-working.txt');
  const conn = await collector(s.name, '60');
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
  await waitFor(() => rowState(conn, again) === 'working', "the new server's working row", 15_000);
  // Pane ids start over on a new server: only frames since the restart count.
  const upserted = (f: Frame) => f.type === 'delta' && (f.upserts as { pane: string }[]).some((r) => r.pane === again);
  expect(frameAt(conn, upserted, t1)! - t1).toBeLessThan(10_000);
}, 45_000);
