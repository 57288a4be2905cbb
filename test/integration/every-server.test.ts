// `wait`, `act` by selector and local `jump` outside tmux with no -L/-S: they cover every tmux
// server of the user, each pane known by (server, pane). Two scratch servers under one private
// TMUX_TMPDIR, both numbering their panes from %0:
//   a (session main):  %0 a shell, %1 a blocked stand-in claude
//   b (session work):  %0 a stand-in claude (working, then idle, ...), %1 a blocked stand-in claude
// so a pane id alone names the wrong pane, or two.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScratchTmux, tma, waitFor, type StandIn } from '../support/scratch-tmux.js';
import { SCREENS } from '../support/screens.js';

let tmp: string;
let saved: string | undefined;
let config: string;
let a: ScratchTmux;
let b: ScratchTmux;
let aBlocked: StandIn;
let bAgent: StandIn;
let bBlocked: StandIn;
let client: ChildProcess | null = null;

const run = (args: string[]) => tma(['--config', config, ...args], { timeoutMs: 25_000 });
const json = (s: string) => JSON.parse(s) as Record<string, unknown>;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'tma-every-server-'));
  saved = process.env.TMUX_TMPDIR;
  // Scratch servers, their sockets and every CLI run below see only this directory.
  process.env.TMUX_TMPDIR = tmp;
  config = join(tmp, 'config.toml');
  // Every cycle re-detects, so a repaint is seen on the next tick.
  writeFileSync(config, '[fold]\nfreshness_secs = 0\n');
  a = new ScratchTmux('eva');
  a.start();
  aBlocked = await a.standIn(a.newPane(), 'claude', SCREENS.claudeBlocked);
  b = new ScratchTmux('evb');
  bAgent = await b.standIn(b.start('work'), 'claude', SCREENS.claudeWorking);
  bBlocked = await b.standIn(b.newPane('work'), 'claude', SCREENS.claudeBlocked);
  expect([aBlocked.pane, bAgent.pane, bBlocked.pane]).toEqual(['%1', '%0', '%1']);
});

afterAll(() => {
  client?.kill('SIGKILL');
  for (const s of [a, b]) s?.kill();
  if (saved === undefined) delete process.env.TMUX_TMPDIR;
  else process.env.TMUX_TMPDIR = saved;
  rmSync(tmp, { recursive: true, force: true });
});

describe('wait', () => {
  it('--pane waits on the agent of whichever server runs one in that pane', async () => {
    let done = false;
    const w = run(['wait', '--until', 'idle', '--pane', '%0', '--json']).then((r) => ((done = true), r));
    await waitFor(() => b.option(bAgent.pane, '@agent_state') === 'working', 'the agent on b seen working', 10_000);
    await sleep(1200);
    expect(done).toBe(false);
    await bAgent.paint(SCREENS.claudeIdle);
    const r = await w;
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(json(r.stdout)).toMatchObject({ pane: '%0', server: b.socketPath(), state: 'idle' });
  }, 30_000);

  it('--all spans the servers and returns once every member there is done', async () => {
    await bAgent.paint(SCREENS.claudeWorking);
    let done = false;
    const w = run(['wait', '--until', 'blocked', '--all', '--json']).then((r) => ((done = true), r));
    await sleep(2500);
    // Both blocked panes are blocked already; the working one on b holds the wait.
    expect(done).toBe(false);
    await bAgent.paint(SCREENS.claudeBlocked);
    const r = await w;
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const rows = (json(r.stdout).agents as { server: string; pane: string; state: string }[]).map((x) => [x.server, x.pane, x.state]);
    expect(rows.sort()).toEqual(
      [
        [a.socketPath(), '%1', 'blocked'],
        [b.socketPath(), '%0', 'blocked'],
        [b.socketPath(), '%1', 'blocked'],
      ].sort(),
    );
    await bAgent.paint(SCREENS.claudeIdle);
  }, 30_000);

  it('--pane on an id agents hold on two servers is refused, naming them', async () => {
    const r = await run(['wait', '--until', 'idle', '--pane', '%1', '--timeout', '0']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(a.socketPath());
    expect(r.stderr).toContain(b.socketPath());
    expect(r.stderr).toContain('name its server with -L or -S');
  });
});

describe('act by selector', () => {
  it('refuses a selector that matches panes on two servers, naming each with its server; nothing is sent', async () => {
    const r = await run(['act', 'approve', '--state', 'blocked']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`%1 (main:1.0 on -L ${a.name})`);
    expect(r.stderr).toContain(`%1 (work:1.0 on -L ${b.name})`);
    await sleep(300);
    expect(aBlocked.keys()).toBe('');
    expect(bBlocked.keys()).toBe('');
  });

  it('--all --dry-run lists the matches of every server, each with its server; nothing is sent', async () => {
    const r = await run(['act', 'approve', '--all', '--state', 'blocked', '--dry-run']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const [head, ...lines] = r.stdout.trimEnd().split('\n');
    expect(head).toBe('targets: 2');
    expect(lines.sort()).toEqual([`%1 would fire on -L ${a.name}`, `%1 would fire on -L ${b.name}`].sort());
    await sleep(300);
    expect(aBlocked.keys()).toBe('');
    expect(bBlocked.keys()).toBe('');
  });

  it('sends the keys to the one pane matched, on its own server only', async () => {
    const r = await run(['act', 'approve', '--state', 'blocked', '--session', 'work', '--json']);
    expect(r.stderr).toBe('tma: approve %1: keys sent\n');
    expect(r.code).toBe(0);
    expect(json(r.stdout)).toMatchObject({ action: 'approve', pane: '%1', outcome: 'sent' });
    await waitFor(() => bBlocked.keys() === '1', 'the key on b %1');
    await sleep(300);
    expect(aBlocked.keys()).toBe('');
    expect(bAgent.keys()).toBe('');
  });
});

describe('jump', () => {
  beforeAll(async () => {
    await bBlocked.paint(SCREENS.claudeBlocked);
    // A person's terminal attached to b, on its first window.
    client = spawn('script', ['-qfc', `tmux -L ${b.name} attach -t work:0`, '/dev/null'], {
      env: { ...process.env, TMUX: '', TERM: 'xterm' },
      stdio: ['pipe', 'ignore', 'ignore'],
    });
    await waitFor(() => b.tmux('list-clients', '-F', '#{client_name}').trim() !== '', 'a client attached to b');
  });

  const at = () => b.tmux('display-message', '-p', '-c', b.tmux('list-clients', '-F', '#{client_name}').trim(), '#{pane_id}').trim();

  it('--pane on an id agents hold on two servers is refused, naming them', async () => {
    const r = await run(['jump', '--pane', '%1']);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`tma: pane %1 is an agent pane on 2 tmux servers (-L ${a.name}, -L ${b.name}): name one with -L or -S\n`);
    expect(at()).toBe('%0');
  });

  it('takes the client on the agent’s server to a blocked pane there', async () => {
    const r = await run(['jump', '--blocked', '--session', 'work']);
    expect(r).toMatchObject({ code: 0, stdout: '', stderr: '' });
    expect(at()).toBe(bBlocked.pane);
  });

  it('says so when no client is attached to the agent’s server', async () => {
    const r = await run(['jump', '--blocked', '--session', 'main']);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`tma: no tmux client is attached to -L ${a.name}, where %1 runs: attach one there\n`);
  });
});
