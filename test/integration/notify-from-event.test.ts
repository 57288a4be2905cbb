// `tma event` ringing inline (`[notify] from_event` / TMA_NOTIFY_FROM_EVENT=1) on a real tmux
// server: a permission Notification on a stand-in rings once through the host sinks (command +
// log), a repeat inside the same episode does not, the env switch alone is enough, neither means
// silence, a muted pane stays silent, and a collector that runs afterwards does not ring again.

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { REPO, ScratchTmux, tma, waitFor } from '../support/scratch-tmux.js';

let scratch: ScratchTmux | null = null;
let child: ChildProcess | null = null;
afterEach(() => {
  child?.kill('SIGKILL');
  child = null;
  scratch?.kill();
  scratch = null;
});

const count = (path: string, pane: string): number =>
  existsSync(path)
    ? readFileSync(path, 'utf8')
        .split('\n')
        .filter((l) => l.includes(`"pane":"${pane}"`)).length
    : 0;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const PERMISSION = '{"notification_type":"permission_prompt","session_id":"s1"}';

it('tma event rings once per episode with from_event or TMA_NOTIFY_FROM_EVENT=1, never otherwise or muted', { timeout: 60_000 }, async () => {
  scratch = new ScratchTmux('nfe');
  const s = scratch;
  const log = join(s.dir, 'notify.jsonl');
  const runs = join(s.dir, 'runs.jsonl');
  const envRuns = join(s.dir, 'env-runs.jsonl');
  const cmd = (file: string) => `{ tr -d '\\n'; echo; } >> ${file}`;
  const on = join(s.dir, 'on.toml');
  writeFileSync(on, ['[notify]', 'from_event = true', `log = "${log}"`, `command = '''${cmd(runs)}'''`, ''].join('\n'));
  // The same sinks without from_event: only the environment may switch the hook's ring on.
  const off = join(s.dir, 'off.toml');
  writeFileSync(off, ['[notify]', `log = "${log}"`, `command = '''${cmd(runs)}'''`, ''].join('\n'));
  const empty = join(s.dir, 'empty.toml');
  writeFileSync(empty, '');
  const base = { XDG_STATE_HOME: join(s.dir, 'state'), XDG_RUNTIME_DIR: join(s.dir, 'run') };
  const event = (pane: string, env: NodeJS.ProcessEnv) =>
    tma(['--socket-name', s.name, 'event', '--agent', 'claude', '--kind', 'Notification', '--payload', '-'], {
      env: { ...base, TMUX_PANE: pane, ...env },
      input: PERMISSION,
    });

  const a = s.start();
  const b = s.newPane();
  const c = s.newPane();
  const d = s.newPane();
  for (const p of [a, b, c, d]) await s.standIn(p, 'claude', 'claude-idle.txt');
  expect((await tma(['--socket-name', s.name, 'mute', '--pane', d, '--for', '1h'], { env: base })).code).toBe(0);

  // 1. from_event in config: one command run, one log line, the marker standing at the episode.
  const t0 = Date.now();
  expect(await event(a, { TMA_CONFIG: on })).toMatchObject({ code: 0, stdout: '', stderr: '' });
  const firstMs = Date.now() - t0;
  expect(s.option(a, '@agent_state')).toBe('blocked');
  await waitFor(() => count(runs, a) === 1, 'inline command run', 5000);
  expect(count(log, a)).toBe(1);
  const marker = Number(s.option(a, '@agent_notified_at'));
  expect(marker).toBeGreaterThanOrEqual(Math.max(Number(s.option(a, '@agent_since')), Number(s.option(a, '@agent_turn_at') || 0)));
  expect(JSON.parse(readFileSync(runs, 'utf8').split('\n')[0]!)).toMatchObject({ schema: 2, agent: 'claude', pane: a, state: 'blocked' });

  // 2. the same event again, same episode: no second ring, marker unchanged.
  expect((await event(a, { TMA_CONFIG: on })).code).toBe(0);
  await sleep(500);
  expect([count(runs, a), count(log, a)]).toEqual([1, 1]);
  expect(Number(s.option(a, '@agent_notified_at'))).toBe(marker);

  // 3. no config at all, TMA_NOTIFY_FROM_EVENT=1 (the command from TMA_NOTIFY_CMD): it rings.
  expect((await event(b, { TMA_CONFIG: empty, TMA_NOTIFY_FROM_EVENT: '1', TMA_NOTIFY_CMD: cmd(envRuns) })).code).toBe(0);
  await waitFor(() => count(envRuns, b) === 1, 'env-switched run', 5000);

  // 4. neither switch: blocked, but silent and no marker (the collector's ring stays due).
  expect((await event(c, { TMA_CONFIG: off })).code).toBe(0);
  expect(s.option(c, '@agent_state')).toBe('blocked');
  // 5. muted: silent, the ring is spent (marker written).
  expect((await event(d, { TMA_CONFIG: on })).code).toBe(0);
  expect(s.option(d, '@agent_state')).toBe('blocked');
  await sleep(500);
  expect([count(runs, c), count(log, c), count(runs, d), count(log, d)]).toEqual([0, 0, 0, 0]);
  expect(s.option(c, '@agent_notified_at')).toBe('');
  expect(Number(s.option(d, '@agent_notified_at'))).toBeGreaterThan(0);

  // 6. a collector with the same sinks now runs its own notifier: a and d already rang (marker),
  // only c, which the hook left alone, rings — once.
  child = spawn(process.execPath, [join(REPO, 'bin/tma.js'), 'hub', '--listen', '127.0.0.1:0', '--socket-name', s.name], {
    env: { ...process.env, ...base, TMUX: '', TMUX_PANE: '', TMA_CONFIG: on, XDG_CONFIG_HOME: join(s.dir, 'cfg') },
    stdio: 'ignore',
  });
  await waitFor(() => count(runs, c) === 1, 'collector rings the pane the hook did not', 20_000);
  await sleep(2000);
  expect([count(runs, a), count(log, a), count(runs, c), count(runs, d)]).toEqual([1, 1, 1, 0]);
  console.log(`notify-from-event: first inline event ${firstMs} ms wall (incl. node start)`);
});
