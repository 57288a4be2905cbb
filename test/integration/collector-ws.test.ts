import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { REPO, ScratchTmux, tma, waitFor } from '../support/scratch-tmux.js';
import { FakeHub, type HubConn } from './fake-hub.js';

const SCREENS = join(REPO, 'test/integration/screens');
const TITLE_MARK = 'TITLE-MARK-q7v3';
const SCREEN_MARK = 'SCREEN-MARK-k2x9';

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

type Frame = Record<string, unknown> & { type: string; seq?: number };
const framesOf = (c: HubConn): Frame[] => c.frames.map((f) => f.frame as Frame);
const rowsIn = (f: Frame): Record<string, unknown>[] =>
  f.type === 'delta'
    ? (f.upserts as Record<string, unknown>[])
    : f.type === 'snapshot'
      ? (f.servers as { rows: Record<string, unknown>[] }[]).flatMap((s) => s.rows)
      : [];

it('publishes a snapshot, wakes on hooks, never leaks titles or screens, and resumes after a drop', async () => {
  scratch = new ScratchTmux('cws');
  const pane = scratch.start();
  await scratch.standIn(pane, 'claude', join(SCREENS, 'claude-idle-marked.txt'));
  dir = mkdtempSync(join(tmpdir(), 'tma-collector-ws-'));
  const tokenFile = join(dir, 'token');
  writeFileSync(tokenFile, 'secret-token-1\n');
  const runtime = join(dir, 'run');
  const env = { ...process.env, TMUX: '', TMUX_PANE: '', XDG_RUNTIME_DIR: runtime, XDG_CONFIG_HOME: join(dir, 'cfg') };

  let welcomeWith: number | null | 'hold' = null;
  hub = await FakeHub.start({ token: 'secret-token-1', welcome: () => welcomeWith });
  let stderr = '';
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
      scratch.name,
      '--interval',
      '30',
      '--host-name',
      'test-box',
    ],
    { env, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  child.stderr!.on('data', (d) => (stderr += d));
  const h = hub;

  // 1. hello, then a complete snapshot holding the stand-in's row.
  await waitFor(() => h.conns[0]?.frames.some((f) => f.frame.type === 'snapshot') === true, 'first snapshot', 10_000);
  const c1 = h.conns[0]!;
  expect(c1.url).toBe('/v1/collect');
  const [hello, snap] = framesOf(c1);
  // With no [remote] allow_actions, every bundled keys action may be fired by a hub.
  expect(hello).toMatchObject({ type: 'hello', protocol: 1, host: 'test-box', actions_allowed: ['approve', 'deny', 'interrupt', 'compact'] });
  const epoch = hello!.epoch as string;
  expect(epoch).toMatch(/^[0-9a-f]{16,64}$/);
  expect(snap).toMatchObject({ type: 'snapshot', epoch, complete: true });
  const row = rowsIn(snap!).find((r) => r.pane === pane);
  expect(row).toMatchObject({ pane, agent: 'claude', state: 'idle', host: 'test-box' });
  expect(row).not.toHaveProperty('title');

  // 2. A hook event reaches the hub through the wake socket, far sooner than the 30 s poll.
  const hook = (kind: string) =>
    tma(['event', '--agent', 'claude', '--kind', kind, '--socket-name', scratch!.name], { env: { TMUX_PANE: pane, XDG_RUNTIME_DIR: runtime } });
  const isState = (state: string) => (f: Frame) => f.type === 'delta' && rowsIn(f).some((r) => r.pane === pane && r.state === state);
  const t0 = Date.now();
  await hook('UserPromptSubmit');
  await waitFor(() => framesOf(c1).some(isState('working')), 'working delta', 3000);
  const arrived = c1.frames.find((f) => isState('working')(f.frame as Frame))!.at;
  expect(arrived - t0).toBeLessThan(1000);
  const working = framesOf(c1).find(isState('working'))!;
  expect(working).toMatchObject({ epoch, server: expect.stringContaining(scratch.name) });
  const lastSeq = Math.max(...framesOf(c1).map((f) => f.seq ?? 0));
  expect(working.seq).toBe(lastSeq);

  // 3. The hub drops the link; a change happens before the new link is welcomed; the hub says
  //    it has everything up to lastSeq, and gets exactly the rest — no snapshot.
  welcomeWith = 'hold';
  const dropped = Date.now();
  c1.drop();
  await waitFor(() => h.conns[1]?.frames.some((f) => f.frame.type === 'hello') === true, 'reconnect', 5000);
  const c2 = h.conns[1]!;
  expect(c2.openedAt - dropped).toBeLessThan(3000);
  expect(framesOf(c2)[0]).toMatchObject({ type: 'hello', epoch });
  await hook('Stop');
  await new Promise((r) => setTimeout(r, 300));
  c2.welcome(lastSeq);
  await waitFor(() => framesOf(c2).some(isState('idle')), 'idle delta after resume', 3000);
  expect(framesOf(c2).some((f) => f.type === 'snapshot')).toBe(false);
  const resumed = framesOf(c2).find(isState('idle'))!;
  expect(resumed).toMatchObject({ epoch, seq: lastSeq + 1 });
  expect(stderr).toMatch(/reconnecting in \d+ ms/);

  // 4. A hub that lost track (resume_from null) gets a fresh complete snapshot, same epoch.
  welcomeWith = null;
  c2.drop();
  await waitFor(() => h.conns[2]?.frames.some((f) => f.frame.type === 'snapshot') === true, 'snapshot after reset', 5000);
  const snap3 = framesOf(h.conns[2]!).find((f) => f.type === 'snapshot')!;
  expect(snap3).toMatchObject({ epoch, complete: true });
  expect(snap3.seq).toBeGreaterThanOrEqual(lastSeq + 1);
  expect(rowsIn(snap3).find((r) => r.pane === pane)).toMatchObject({ state: 'idle' });

  // 5. Nothing that left the host carries the title or the screen.
  const all = h.allText();
  expect(all.length).toBeGreaterThan(5);
  for (const text of all) {
    expect(text).not.toContain(TITLE_MARK);
    expect(text).not.toContain(SCREEN_MARK);
    expect(text).not.toContain('"title"');
  }
});

it('is refused without the right token, says so once, and waits minutes before trying again', async () => {
  dir = mkdtempSync(join(tmpdir(), 'tma-collector-ws-'));
  const tokenFile = join(dir, 'token');
  writeFileSync(tokenFile, 'wrong\n');
  hub = await FakeHub.start({ token: 'right' });
  let stderr = '';
  child = spawn(
    process.execPath,
    [join(REPO, 'bin/tma.js'), 'collector', '--hub', `ws://127.0.0.1:${hub.port}/v1/collect`, '--token-file', tokenFile, '--socket-name', 'tma-none-such'],
    { env: { ...process.env, TMUX: '', XDG_RUNTIME_DIR: join(dir, 'run') }, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  child.stderr!.on('data', (d) => (stderr += d));
  await waitFor(() => (stderr.match(/HTTP 401/g) ?? []).length >= 1, 'a refused attempt', 8000);
  // A retry cannot fix a wrong token: no hot loop, one line, and the next try a minute or more away.
  await new Promise((r) => setTimeout(r, 3000));
  expect(stderr.match(/HTTP 401/g)).toHaveLength(1);
  expect(Number(/retrying in (\d+) s/.exec(stderr)?.[1])).toBeGreaterThanOrEqual(60);
  expect(hub.conns).toHaveLength(0);
  expect(stderr).not.toContain('wrong');
});
