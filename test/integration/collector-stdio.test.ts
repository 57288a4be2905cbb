import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { REPO, ScratchTmux, waitFor } from '../support/scratch-tmux.js';

let scratch: ScratchTmux | null = null;
let child: ChildProcessWithoutNullStreams | null = null;
let dir = '';

afterEach(() => {
  child?.kill('SIGKILL');
  child = null;
  scratch?.kill();
  scratch = null;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

type Frame = Record<string, unknown> & { type: string };

it('speaks the same protocol over stdin/stdout, one frame per line, and ends at end of input', async () => {
  scratch = new ScratchTmux('cst');
  const pane = scratch.start();
  await scratch.standIn(pane, 'claude', join(REPO, 'test/integration/screens/claude-idle-marked.txt'));
  dir = mkdtempSync(join(tmpdir(), 'tma-collector-stdio-'));
  child = spawn(process.execPath, [join(REPO, 'bin/tma.js'), 'collector', '--stdio', '--socket-name', scratch.name, '--host-name', 'piped'], {
    env: { ...process.env, TMUX: '', XDG_RUNTIME_DIR: join(dir, 'run'), XDG_CONFIG_HOME: join(dir, 'cfg') },
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((r) => child!.on('exit', (code) => r(code)));
  const lines = () => out.split('\n').filter((l) => l !== '');
  const frames = (): Frame[] => lines().map((l) => JSON.parse(l) as Frame);
  const send = (text: string) => child!.stdin.write(`${text}\n`);

  await waitFor(() => frames().some((f) => f.type === 'hello'), 'hello');
  expect(frames()[0]).toMatchObject({ type: 'hello', protocol: 1, host: 'piped' });
  send(JSON.stringify({ type: 'welcome', protocol: 1, resume_from: null }));
  await waitFor(() => frames().some((f) => f.type === 'snapshot' && f.complete === true), 'snapshot', 10_000);
  const snap = frames().find((f) => f.type === 'snapshot')!;
  const rows = (snap.servers as { rows: Record<string, unknown>[] }[]).flatMap((s) => s.rows);
  expect(rows.find((r) => r.pane === pane)).toMatchObject({ agent: 'claude', state: 'idle', host: 'piped' });

  // A bad line is answered with an error frame; an act on a server this collector does not follow
  // gets a clear answer, and fires nothing.
  send('not json');
  send(
    JSON.stringify({
      type: 'act',
      id: 'x1',
      action: 'approve',
      server: '/s',
      pane,
      expect_episode_ms: null,
      expect_permission_request: null,
      slot: 'k1',
      principal: 'op',
      deadline_ms: 1,
    }),
  );
  await waitFor(() => frames().some((f) => f.type === 'act_result'), 'act result');
  expect(frames().find((f) => f.type === 'error')).toMatchObject({ code: 'bad-json' });
  expect(frames().find((f) => f.type === 'act_result')).toMatchObject({
    id: 'x1',
    result: { outcome: 'vanished', reason: 'pane-gone', exit_code: 3, host: 'piped' },
  });

  // stdout carries frames only: every line parses.
  for (const l of lines()) expect(() => JSON.parse(l)).not.toThrow();
  expect(out).not.toContain('TITLE-MARK-q7v3');
  expect(out).not.toContain('SCREEN-MARK-k2x9');

  const t0 = Date.now();
  child.stdin.end();
  expect(await exited).toBe(0);
  expect(Date.now() - t0).toBeLessThan(3000);
});

it('exits promptly when its input ends at any moment, start-up included, or its output is closed', async () => {
  scratch = new ScratchTmux('cse');
  const pane = scratch.start();
  await scratch.standIn(pane, 'claude', join(REPO, 'test/integration/screens/claude-idle-marked.txt'));
  dir = mkdtempSync(join(tmpdir(), 'tma-collector-stdio-eof-'));
  const env = { ...process.env, TMUX: '', XDG_RUNTIME_DIR: join(dir, 'run'), XDG_CONFIG_HOME: join(dir, 'cfg') };
  const args = [join(REPO, 'bin/tma.js'), 'collector', '--stdio', '--socket-name', scratch.name, '--host-name', 'piped'];
  // All five at once (a loaded machine is the realistic case); each must exit on its own.
  const runs = [0, 100, 200, 500, 2000].map(async (eofAfterMs) => {
    const c = spawn(process.execPath, args, { env, stdio: ['pipe', 'ignore', 'ignore'] });
    const exited = new Promise<number | null>((r) => c.on('exit', (code) => r(code)));
    await new Promise((r) => setTimeout(r, eofAfterMs));
    const t0 = Date.now();
    c.stdin.end();
    const code = await Promise.race([exited, new Promise<'hung'>((r) => setTimeout(() => r('hung'), 15_000))]);
    if (code === 'hung') c.kill('SIGKILL');
    return { eofAfterMs, code, ms: Date.now() - t0 };
  });
  // A reader that goes away: the first frame written fails, and that ends the collector too.
  const closedOut = (async () => {
    const c = spawn(process.execPath, args, { env, stdio: ['pipe', 'pipe', 'ignore'] });
    c.stdout.destroy();
    const exited = new Promise<number | null>((r) => c.on('exit', (code) => r(code)));
    const code = await Promise.race([exited, new Promise<'hung'>((r) => setTimeout(() => r('hung'), 15_000))]);
    if (code === 'hung') c.kill('SIGKILL');
    return code;
  })();
  for (const r of await Promise.all(runs)) expect(r, `EOF after ${r.eofAfterMs} ms`).toMatchObject({ code: 0 });
  expect(await closedOut).not.toBe('hung');
}, 40_000);
