// A collector whose clock steps an hour ahead and back (libfaketime, stepped while it runs through
// FAKETIME_TIMESTAMP_FILE): what it stamped and rang during the hour ahead must not hide what comes
// after. A pane that blocks once the clock is back is published within a second of painting and
// rings once. Real tmux, a stand-in agent, the real `tma hub` with its embedded collector.

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { REPO, ScratchTmux, waitFor } from '../support/scratch-tmux.js';

const LIBFAKETIME = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';

let scratch: ScratchTmux | null = null;
let child: ChildProcess | null = null;
afterEach(() => {
  child?.kill('SIGKILL');
  child = null;
  scratch?.kill();
  scratch = null;
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const lines = (path: string): Record<string, unknown>[] =>
  existsSync(path)
    ? readFileSync(path, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>)
    : [];

it('after a clock an hour ahead steps back, a new blocked episode is published at once and rings once', { timeout: 120_000 }, async () => {
  scratch = new ScratchTmux('clk');
  const s = scratch;
  const a = s.start();
  const log = join(s.dir, 'notify.jsonl');
  const config = join(s.dir, 'config.toml');
  writeFileSync(config, ['[notify]', 'on = ["blocked"]', `log = "${log}"`, ''].join('\n'));
  const offset = join(s.dir, 'faketime');
  writeFileSync(offset, '+0\n');
  const env = {
    ...process.env,
    TMUX: '',
    TMUX_PANE: '',
    TMA_CONFIG: config,
    XDG_STATE_HOME: join(s.dir, 'state'),
    XDG_RUNTIME_DIR: join(s.dir, 'run'),
    XDG_CONFIG_HOME: join(s.dir, 'cfg'),
    // Only the wall clock steps: timers run on the monotonic clock, as they do on a real machine.
    LD_PRELOAD: LIBFAKETIME,
    FAKETIME_TIMESTAMP_FILE: offset,
    FAKETIME_NO_CACHE: '1',
    FAKETIME_DONT_FAKE_MONOTONIC: '1',
  };
  const agent = await s.standIn(a, 'claude', 'claude-idle.txt');
  child = spawn(process.execPath, [join(REPO, 'bin/tma.js'), 'hub', '--listen', '127.0.0.1:0', '--socket-name', s.name], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const state = () => s.option(a, '@agent_state');
  const blockedFires = () => lines(log).filter((l) => l.pane === a && l.state === 'blocked').length;
  await waitFor(() => state() === 'idle', 'the idle stamp', 30_000).catch((e: unknown) => {
    throw new Error(`${(e as Error).message}; hub output: ${output.slice(-2000)}`);
  });

  // An hour ahead: the pane blocks (and rings, its marker an hour ahead), then goes idle again.
  writeFileSync(offset, '+3600\n');
  await sleep(1000);
  await agent.paint('claude-permission-dialog.txt');
  await waitFor(() => blockedFires() === 1, 'the ring an hour ahead', 15_000);
  await agent.paint('claude-idle.txt');
  await waitFor(() => state() === 'idle', 'idle again', 15_000);

  // Back to the right time; then the pane blocks again.
  writeFileSync(offset, '+0\n');
  await sleep(1500);
  const painted = Date.now();
  await agent.paint('claude-permission-dialog.txt');
  await waitFor(() => state() === 'blocked', 'blocked published', 30_000).catch((e: unknown) => {
    throw new Error(`${(e as Error).message}; now ${Date.now()}; pane: ${s.tmux('show-options', '-p', '-t', a)}; hub output: ${output.slice(-3000)}`);
  });
  const publishedMs = Date.now() - painted;
  await waitFor(() => blockedFires() === 2, 'the new episode rings', 10_000);
  await sleep(2000);
  expect(blockedFires()).toBe(2);
  expect(publishedMs).toBeLessThan(1000);
  // The stamp is of the corrected clock, not left an hour ahead.
  expect(Number(s.option(a, '@agent_since'))).toBeLessThan(Date.now() + 5000);
});
