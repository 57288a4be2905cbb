import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ControlRunner } from '../../collector/tmux/control-runner.js';
import { TmuxError } from '../../collector/tmux/errors.js';
import { hostName } from '../../collector/tmux/host.js';
import { pidAlive, readProcessTable, readPsTable } from '../../collector/tmux/proc-table.js';
import { openRunner, type TmuxRunner } from '../../collector/tmux/runner.js';
import { SpawnRunner } from '../../collector/tmux/spawn-runner.js';
import type { ServerTarget } from '../../collector/tmux/target.js';

const US = '\u001f';

let name = '';
let target: ServerTarget = { kind: 'default' };
const runners: TmuxRunner[] = [];

/** Direct tmux on the scratch server, for setting up and for the reference answers. */
function tmux(...args: string[]): string {
  return execFileSync('tmux', ['-u', '-L', name, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

function startServer(): void {
  tmux('-f', '/dev/null', 'new-session', '-d', '-s', 'main', '-x', '80', '-y', '24', 'sh');
}

async function open(mode: 'spawn' | 'control'): Promise<TmuxRunner> {
  const r = await openRunner(target, { mode, bin: 'tmux' });
  runners.push(r);
  return r;
}

async function failure(p: Promise<unknown>): Promise<TmuxError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof TmuxError) return e;
    throw e;
  }
  throw new Error('expected the call to fail');
}

async function until(check: () => boolean | Promise<boolean>, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

beforeEach(() => {
  name = `tma-test-${randomBytes(6).toString('hex')}`;
  target = { kind: 'name', name };
});

afterEach(() => {
  for (const r of runners.splice(0)) r.close();
  try {
    tmux('kill-server');
  } catch {
    // already gone
  }
  // tmux 3.3a leaves its socket file behind when the server exits.
  rmSync(join(process.env.TMUX_TMPDIR ?? '/tmp', `tmux-${process.getuid?.() ?? 0}`, name), { force: true });
});

describe.each(['spawn', 'control'] as const)('%s runner', (mode) => {
  beforeEach(startServer);

  it('runs display -p and reports its mode', async () => {
    const r = await open(mode);
    expect(r.mode).toBe(mode);
    if (mode === 'control') expect((r as ControlRunner).attached).toBe(true);
    const pid = await r.run(['display-message', '-p', '#{pid}']);
    expect(pid).toBe(tmux('display-message', '-p', '#{pid}'));
    expect(pid).toMatch(/^\d+\n$/);
  });

  it('lists panes with U+001F separators intact', async () => {
    tmux('split-window', '-t', 'main', 'sh');
    tmux('new-session', '-d', '-s', 'two words', 'sh');
    const r = await open(mode);
    const fmt = `#{pane_id}${US}#{session_name}${US}#{pane_pid}`;
    const out = await r.run(['list-panes', '-a', '-F', fmt]);
    expect(out).toBe(tmux('list-panes', '-a', '-F', fmt));
    const rows = out
      .trimEnd()
      .split('\n')
      .map((l) => l.split(US));
    expect(rows).toHaveLength(3);
    expect(rows.map((f) => f[1])).toContain('two words');
    for (const f of rows) expect(f).toHaveLength(3);
  });

  it('captures a pane with escapes, the same as a one-shot tmux', async () => {
    tmux('send-keys', '-t', 'main', "printf '\\033[31mred\\033[0m ünï ✓\\n'", 'Enter');
    await until(() => tmux('capture-pane', '-p', '-t', 'main').includes('red ünï ✓'));
    const r = await open(mode);
    const out = await r.run(['capture-pane', '-p', '-e', '-t', 'main', '-S', '-50']);
    expect(out).toContain('\u001b[31mred');
    expect(out).toBe(tmux('capture-pane', '-p', '-e', '-t', 'main', '-S', '-50'));
  });

  it('stores tricky option values verbatim and reads them back', async () => {
    const r = await open(mode);
    const pane = tmux('display-message', '-p', '-t', 'main', '#{pane_id}').trim();
    const values = [
      'two words',
      'it\'s "quoted"',
      '#{?#{==:#{@agent_source},hook},#{@agent_state},working}',
      'a;b',
      'ends;',
      'ends\\;',
      ';',
      '$HOME ~/x',
      'ünïcødé ✓ 🙂',
      'line1\nline2',
      '',
    ];
    const set = values.map((v, i) => ['set-option', '-p', '-t', pane, `@v${i}`, v]);
    await r.runChain(set);
    const got = await r.runChain(values.map((_, i) => ['show-options', '-p', '-v', '-t', pane, `@v${i}`]));
    expect(got).toEqual(values.map((v) => `${v}\n`));
  });

  it('expands -F conditionals with commas and spaces in one chain, server-side', async () => {
    const r = await open(mode);
    const pane = tmux('display-message', '-p', '-t', 'main', '#{pane_id}').trim();
    tmux('set-option', '-p', '-t', pane, '@src', 'hook');
    const outs = await r.runChain([
      ['set-option', '-p', '-F', '-t', pane, '@a', '#{?#{==:#{@src},hook},kept as is,new value}'],
      ['set-option', '-p', '-F', '-t', pane, '@b', '#{?#{==:#{@src},capture},kept,new#, with comma}'],
      ['set-option', '-p', '-t', pane, '@src', 'capture'],
      ['set-option', '-p', '-F', '-t', pane, '@c', '#{?#{==:#{@src},capture},seen; later,stale}'],
      ['show-options', '-p', '-v', '-t', pane, '@a'],
      ['show-options', '-p', '-v', '-t', pane, '@b'],
      ['show-options', '-p', '-v', '-t', pane, '@c'],
    ]);
    expect(outs).toEqual(['', '', '', '', 'kept as is\n', 'new, with comma\n', 'seen; later\n']);
  });

  it('returns each command of a chain separately, empty lines included', async () => {
    const r = await open(mode);
    const outs = await r.runChain([
      ['display-message', '-p', 'first'],
      ['display-message', '-p', ''],
      ['set-option', '-s', '@tma_x', '1'],
      ['display-message', '-p', 'last'],
    ]);
    expect(outs).toEqual(['first\n', '\n', '', 'last\n']);
    // run() with bare ; tokens is the same chain with the outputs joined.
    expect(await r.run(['display-message', '-p', 'a', ';', 'display-message', '-p', 'b'])).toBe('a\nb\n');
  });

  it('fails a chain whose command fails, and stays usable', async () => {
    const r = await open(mode);
    const e = await failure(
      r.runChain([
        ['display-message', '-p', 'x'],
        ['select-pane', '-t', '%9999'],
      ]),
    );
    expect(e.kind).toBe('failed');
    expect(e.stderr).toMatch(/can't find pane/);
    expect(await r.run(['display-message', '-p', 'ok'])).toBe('ok\n');
  });

  it('is not confused by a screen that paints control-mode lines', async () => {
    // The runner attaches first: a control client attaching can resize the window, and a screen
    // reflowed between the two captures below would differ for a reason that is not the parser.
    const r = await open(mode);
    tmux('send-keys', '-t', 'main', "printf '%%end 1 2 3\\n%%error 1 2 1\\n%%begin 9 9 1\\n%%exit\\n'", 'Enter');
    await until(() => tmux('capture-pane', '-p', '-t', 'main').includes('%exit'));
    const [cap, after] = await r.runChain([
      ['capture-pane', '-p', '-t', 'main'],
      ['display-message', '-p', 'after'],
    ]);
    expect(cap).toBe(tmux('capture-pane', '-p', '-t', 'main'));
    expect(cap).toContain('\n%end 1 2 3\n%error 1 2 1\n%begin 9 9 1\n%exit\n');
    expect(after).toBe('after\n');
    expect(await r.run(['display-message', '-p', 'still'])).toBe('still\n');
  });

  it('times out a call that blocks, and the next call works', async () => {
    const r = await open(mode);
    const t0 = Date.now();
    const e = await failure(r.run(['wait-for', 'never-signalled'], { timeoutMs: 200 }));
    expect(e.kind).toBe('timeout');
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(await r.run(['display-message', '-p', 'alive'])).toBe('alive\n');
  });

  it('settles pending calls and fails later ones as server-gone when the server is killed', async () => {
    const r = await open(mode);
    // tmux releases wait-for waiters as it shuts down, so the pending call may succeed: it only
    // has to settle, promptly.
    const pending = r.run(['wait-for', 'never-signalled'], { timeoutMs: 10_000 }).catch((e: unknown) => e);
    await new Promise((res) => setTimeout(res, 200));
    const t0 = Date.now();
    tmux('kill-server');
    await pending;
    expect(Date.now() - t0).toBeLessThan(3000);
    const t1 = Date.now();
    const next = await failure(r.run(['display-message', '-p', 'x']));
    expect(next.kind).toBe('server-gone');
    expect(Date.now() - t1).toBeLessThan(3000);
  });

  it('fails calls pending on a server that dies without answering as server-gone', async () => {
    const r = await open(mode);
    const serverPid = Number(tmux('display-message', '-p', '#{pid}').trim());
    const pending = r.run(['wait-for', 'never-signalled'], { timeoutMs: 10_000 }).then(
      (v) => ({ ok: true as const, v }),
      (e: unknown) => ({ ok: false as const, e }),
    );
    await new Promise((res) => setTimeout(res, 200));
    const t0 = Date.now();
    process.kill(serverPid, 'SIGKILL');
    const settled = await pending;
    expect(Date.now() - t0).toBeLessThan(3000);
    if (mode === 'control') {
      expect(settled.ok).toBe(false);
      expect(!settled.ok && settled.e instanceof TmuxError && settled.e.kind).toBe('server-gone');
    }
    const next = await failure(r.run(['display-message', '-p', 'x']));
    expect(next.kind).toBe('server-gone');
    expect(Date.now() - t0).toBeLessThan(3000);
  });
});

describe('without a server', () => {
  it.each(['spawn', 'control'] as const)('%s: a call is server-gone and no server gets started', async (mode) => {
    const r = await open(mode);
    if (mode === 'control') expect((r as ControlRunner).attached).toBe(false);
    const e = await failure(r.run(['list-panes', '-a']));
    expect(e.kind).toBe('server-gone');
    expect(() => tmux('list-sessions')).toThrow(/no server running|error connecting/);
  });

  it('a socket path that does not exist is server-gone', async () => {
    const r = new SpawnRunner({ target: { kind: 'path', path: '/nonexistent-dir/sock' }, bin: 'tmux' });
    expect((await failure(r.run(['list-panes', '-a']))).kind).toBe('server-gone');
  });

  it('a missing tmux binary is a plain failure', async () => {
    const r = new SpawnRunner({ target, bin: '/nonexistent/tmux' });
    expect((await failure(r.run(['list-panes']))).kind).toBe('failed');
  });
});

describe('spawn runner with a fake tmux', () => {
  let dir = '';
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tma-fake-tmux-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  function fake(body: string): string {
    const path = join(dir, 'tmux');
    writeFileSync(path, `#!/bin/sh\n${body}\n`);
    chmodSync(path, 0o755);
    return path;
  }

  it('kills a tmux that hangs once the timeout passes', async () => {
    const r = new SpawnRunner({ target, bin: fake('exec sleep 30') });
    const t0 = Date.now();
    const e = await failure(r.run(['list-panes'], { timeoutMs: 150 }));
    expect(e.kind).toBe('timeout');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(140);
    expect(Date.now() - t0).toBeLessThan(1500);
  });

  it('passes global args first, keeps argv literal and feeds stdin', async () => {
    const r = new SpawnRunner({ target, bin: fake('for a in "$@"; do printf "[%s]" "$a"; done; printf "|"; cat') });
    const out = await r.run(['set-option', '@k', 'a b;', ';', 'show'], { input: 'IN' });
    expect(out).toBe(`[-u][-L][${name}][set-option][@k][a b\\;][;][show]|IN`);
  });

  it('classifies what the fake says on stderr', async () => {
    const r = new SpawnRunner({ target, bin: fake('echo "no server running on /x" >&2; exit 1') });
    expect((await failure(r.run(['list-panes']))).kind).toBe('server-gone');
    const r2 = new SpawnRunner({ target, bin: fake('echo "unknown command: x" >&2; exit 1') });
    const e = await failure(r2.run(['x']));
    expect(e.kind).toBe('failed');
    expect(e.stderr).toBe('unknown command: x');
  });
});

describe('control runner lifecycle', () => {
  beforeEach(startServer);

  it('delivers notifications as events', async () => {
    const r = (await open('control')) as ControlRunner;
    const seen: string[] = [];
    r.on('notification', (n) => seen.push(n.name));
    tmux('new-session', '-d', '-s', 'other', 'sh');
    await until(() => seen.includes('sessions-changed'));
  });

  it('delivers %output only when asked to', async () => {
    const r = new ControlRunner({ target, bin: 'tmux', output: true });
    runners.push(r);
    expect(await r.connect()).toBe(true);
    const quiet = (await open('control')) as ControlRunner;
    const loud: string[] = [];
    const silent: string[] = [];
    r.on('notification', (n) => n.name === 'output' && loud.push(n.args));
    quiet.on('notification', (n) => n.name === 'output' && silent.push(n.args));
    tmux('send-keys', '-t', 'main', 'echo painted-marker', 'Enter');
    await until(() => loud.some((a) => a.includes('painted-marker')));
    await quiet.run(['display-message', '-p', 'sync']);
    expect(silent).toEqual([]);
  });

  it('re-attaches after its session is killed, and reports the loss', async () => {
    tmux('new-session', '-d', '-s', 'spare', 'sh');
    const r = (await open('control')) as ControlRunner;
    const closed: string[] = [];
    r.on('closed', (c) => closed.push(c.kind));
    const attachedTo = (await r.run(['display-message', '-p', '#{client_session}'])).trim();
    tmux('kill-session', '-t', attachedTo);
    await until(() => closed.length > 0);
    expect(closed).toEqual(['failed']);
    expect(await r.run(['display-message', '-p', 'back'])).toBe('back\n');
    expect(r.attached).toBe(true);
  });

  it('answers through one-shot processes while the server has no session, then attaches', async () => {
    tmux('set-option', '-s', 'exit-empty', 'off');
    tmux('kill-session', '-t', 'main');
    const r = new ControlRunner({ target, bin: 'tmux', reattachIntervalMs: 50 });
    runners.push(r);
    expect(await r.connect()).toBe(false);
    expect(await r.run(['display-message', '-p', 'via spawn'])).toBe('via spawn\n');
    expect(r.attached).toBe(false);
    // Attaching never created a session of its own.
    expect(tmux('list-sessions')).toBe('');
    startServer();
    await new Promise((res) => setTimeout(res, 60));
    expect(await r.run(['display-message', '-p', 'via control'])).toBe('via control\n');
    expect(r.attached).toBe(true);
  });

  it('fails calls after close()', async () => {
    const r = await open('control');
    r.close();
    expect((await failure(r.run(['display-message', '-p', 'x']))).kind).toBe('failed');
  });
});

describe('process table', () => {
  it('sees a child of this process with its comm and ppid', async () => {
    const child = spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      const pid = child.pid ?? -1;
      await until(async () => (await readProcessTable()).some((p) => p.pid === pid && p.comm === 'sleep'));
      for (const table of [await readProcessTable(), await readProcessTable({ procRoot: '/nonexistent' }), await readPsTable()]) {
        const me = table.find((p) => p.pid === pid);
        expect(me).toMatchObject({ pid, ppid: process.pid, comm: 'sleep' });
      }
      expect(pidAlive(pid)).toBe(true);
    } finally {
      child.kill('SIGKILL');
    }
    await until(() => !pidAlive(child.pid ?? -1));
    expect(pidAlive(0)).toBe(false);
    expect(pidAlive(-5)).toBe(false);
  });

  it('names the host', () => {
    expect(hostName()).toBe(execFileSync('uname', ['-n'], { encoding: 'utf8' }).trim());
  });
});
