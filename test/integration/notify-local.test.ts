// The host notifier against a real tmux server, driven by a real long-lived collector: the one a
// zero-config `tma hub` runs for its own machine. Stand-ins go blocked, stay
// blocked, are answered and block again; a muted pane never rings; context_high rings once per
// crossing of its threshold. Evidence: the [notify] log and a command that appends a line per run.

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { canonicalSocketPath, pokeWake, wakeDir, wakeSocketPath } from '../../collector/fleet/wake.js';
import { REPO, ScratchTmux, tma, waitFor } from '../support/scratch-tmux.js';

let scratch: ScratchTmux | null = null;
let child: ChildProcess | null = null;

afterEach(() => {
  child?.kill('SIGKILL');
  child = null;
  scratch?.kill();
  scratch = null;
});

/** How long "stays blocked" is held here (the minute, shortened to keep CI quick). */
const HOLD_MS = 15_000;

const lines = (path: string): Record<string, unknown>[] =>
  existsSync(path)
    ? readFileSync(path, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>)
    : [];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

it('rings once per episode, again for the next, never while muted, and context_high once per crossing', { timeout: 90_000 }, async () => {
  scratch = new ScratchTmux('ntf');
  const s = scratch;
  const a = s.start();
  const b = s.newPane();
  const log = join(s.dir, 'notify.jsonl');
  const runs = join(s.dir, 'runs.jsonl');
  const config = join(s.dir, 'config.toml');
  // The command records its stdin (the payload) and two of its environment variables, a line per run.
  writeFileSync(
    config,
    [
      '[notify]',
      'on = ["blocked", "done"]',
      `log = "${log}"`,
      `command = '''{ printf '{"env_state":"%s","env_pane":"%s","payload":' "$TMA_STATE" "$TMA_PANE"; tr -d '\\n'; echo '}'; } >> ${runs}'''`,
      '[notify.context_high]',
      'threshold = 80',
      '',
    ].join('\n'),
  );
  const env = { ...process.env, TMUX: '', TMUX_PANE: '', TMA_CONFIG: config, XDG_STATE_HOME: join(s.dir, 'state'), XDG_RUNTIME_DIR: join(s.dir, 'run') };

  const standA = await s.standIn(a, 'claude', 'claude-idle.txt');
  const sb = await s.standIn(b, 'claude', 'claude-idle.txt');
  // Pane b is muted before anything happens on it.
  expect((await tma(['--socket-name', s.name, 'mute', '--pane', b, '--for', '1h'], { env })).code).toBe(0);

  child = spawn(process.execPath, [join(REPO, 'bin/tma.js'), 'hub', '--listen', '127.0.0.1:0', '--socket-name', s.name], {
    env: { ...env, XDG_CONFIG_HOME: join(s.dir, 'cfg') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // The hub logs (its embedded collector's lines too) as JSON on stdout.
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));

  const fires = (pane: string, state: string) => lines(log).filter((l) => l.pane === pane && l.state === state);
  const runsOf = (pane: string, state: string) =>
    lines(runs).filter((l) => (l.payload as Record<string, unknown>).pane === pane && (l.payload as Record<string, unknown>).state === state);

  // 1. a goes blocked: one log line, one command run, the payload (schema 2, no title) on stdin.
  await standA.paint('claude-permission-dialog.txt');
  await sb.paint('claude-permission-dialog.txt');
  await waitFor(() => runsOf(a, 'blocked').length === 1, 'first blocked fire', 20_000);
  const [line] = fires(a, 'blocked');
  expect(Object.keys(line!).slice(0, 3)).toEqual(['schema', 'at', 'agent']);
  expect(line).toMatchObject({ schema: 2, agent: 'claude', pane: a, state: 'blocked' });
  expect(line).not.toHaveProperty('title');
  const [run] = runsOf(a, 'blocked');
  expect(run).toMatchObject({ env_state: 'blocked', env_pane: a, payload: { schema: 2, pane: a, state: 'blocked' } });
  expect(run!.payload).not.toHaveProperty('title');
  expect(Number(s.option(a, '@agent_notified_at'))).toBeGreaterThanOrEqual(Number(line!.episode_ms));

  // 2. context on b (muted) and a: a crosses 80 once, holds, drops below 70, crosses again.
  // A gauge writer stores the values, then pokes the collector as `tma event` does: an option
  // write paints nothing, so the collector would otherwise see it only at its safety sweep.
  const wakeSock = wakeSocketPath(canonicalSocketPath(s.tmux('display-message', '-p', '#{socket_path}').trim()), wakeDir(env));
  const setCtx = async (pane: string, pct: number) => {
    s.tmux('set-option', '-p', '-t', pane, '@agent_context_pct', String(pct));
    s.tmux('set-option', '-p', '-t', pane, '@agent_context_at', String(Date.now()));
    await pokeWake(wakeSock);
  };
  await setCtx(b, 95);
  await setCtx(a, 85);
  await waitFor(() => fires(a, 'context_high').length === 1, 'context_high fire', 10_000);
  await setCtx(a, 92);
  await sleep(1500);
  await setCtx(a, 75); // below the threshold but within the re-arm gap: still disarmed
  await sleep(1500);
  expect(fires(a, 'context_high')).toHaveLength(1);
  await setCtx(a, 60);
  await waitFor(() => s.option(a, '@agent_context_notified_at') === '', 're-armed', 10_000);
  await setCtx(a, 88);
  await waitFor(() => fires(a, 'context_high').length === 2, 'second context_high fire', 10_000);
  expect(fires(a, 'context_high')[1]).toMatchObject({ state: 'context_high', detail: null, context_pct: 88 });

  // 3. a stays blocked (HOLD_MS in all since its fire): still one.
  const firedAt = Number(line!.at);
  await sleep(Math.max(0, firedAt + HOLD_MS - Date.now()));
  expect(fires(a, 'blocked')).toHaveLength(1);
  expect(runsOf(a, 'blocked')).toHaveLength(1);

  // 4. answered (working), then blocked again: a second fire, for a later episode.
  const hook = (kind: string, payload = '{}') =>
    tma(['--socket-name', s.name, 'event', '--agent', 'claude', '--kind', kind, '--payload', '-'], { env: { ...env, TMUX_PANE: a }, input: payload });
  await standA.paint('claude-working.txt');
  await hook('PreToolUse');
  await waitFor(() => s.option(a, '@agent_state') === 'working', 'a working', 15_000);
  await standA.paint('claude-permission-dialog.txt');
  await hook('Notification', '{"notification_type":"permission_prompt"}');
  await waitFor(() => runsOf(a, 'blocked').length === 2, 'second blocked fire', 20_000);
  const second = fires(a, 'blocked')[1]!;
  expect(Number(second.episode_ms)).toBeGreaterThan(Number(line!.episode_ms));

  // 5. the muted pane b never rang for anything, but its episode is spent (marker written).
  expect(s.option(b, '@agent_state')).toBe('blocked');
  expect(lines(log).filter((l) => l.pane === b)).toEqual([]);
  expect(lines(runs).filter((l) => l.env_pane === b)).toEqual([]);
  expect(s.option(b, '@agent_notified_at')).not.toBe('');
  expect(s.option(b, '@agent_context_notified_at')).not.toBe('');
  expect(output).toContain('hub listening');
  expect(output).not.toMatch(/notify: /);
});

it('notify-test fires through the configured sinks, and doctor shows a failed command until a clean run', { timeout: 60_000 }, async () => {
  scratch = new ScratchTmux('ntt');
  const s = scratch;
  s.start();
  const log = join(s.dir, 'n.jsonl');
  const config = join(s.dir, 'config.toml');
  const env = { TMA_CONFIG: config, XDG_STATE_HOME: join(s.dir, 'state') };
  writeFileSync(config, `[notify]\nlog = "${log}"\ncommand = "exit 3"\n[notify.context_high]\nthreshold = 85\n`);
  const fired = await tma(['--socket-name', s.name, 'debug', 'notify-test', '--trigger', 'context_high'], { env });
  expect(fired).toMatchObject({ code: 0, stdout: 'tma: notify-test fired context_high\n' });
  expect(lines(log)).toEqual([expect.objectContaining({ schema: 2, state: 'context_high', context_pct: 85, agent: 'tma' })]);
  const doc = JSON.parse((await tma(['--socket-name', s.name, 'doctor', '--json'], { env })).stdout) as { notify: { last_failure: unknown } };
  expect(doc.notify.last_failure).toEqual({ at: expect.any(Number), reason: 'exit 3', command: 'exit 3' });
  expect((await tma(['--socket-name', s.name, 'doctor'], { env })).stdout).toContain('notify: the last notify command failed (exit 3)');

  writeFileSync(config, `[notify]\ncommand = "true"\n`);
  expect((await tma(['--socket-name', s.name, 'debug', 'notify-test', '--trigger', 'done'], { env })).code).toBe(0);
  const after = JSON.parse((await tma(['--socket-name', s.name, 'doctor', '--json'], { env })).stdout) as { notify: { last_failure: unknown } };
  expect(after.notify.last_failure).toBeNull();
  expect((await tma(['debug', 'notify-test', '--trigger', 'nope'], { env })).code).toBe(2);
});
