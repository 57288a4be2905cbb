// The hook wrapper as agents call it, and the one-shot verbs' text forms, on a real server.

import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { REPO, ScratchTmux, tma } from '../support/scratch-tmux.js';
import { SCREENS } from '../support/screens.js';

let t: ScratchTmux;
beforeEach(() => {
  t = new ScratchTmux('hk');
});
afterEach(() => t.kill());

/** Run bin/tma-hook the way an agent's hook does: inside the pane's environment. */
function hook(pane: string, args: string[], stdin = ''): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(join(REPO, 'bin/tma-hook'), args, {
    input: stdin,
    encoding: 'utf8',
    env: { ...process.env, TMUX_PANE: pane, TMA_HOOK_SOCKET: t.name, TMA_BIN: join(REPO, 'bin/tma.js') },
    timeout: 10_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

it('tma-hook stamps from stdin, and from a third argument (codex notify)', async () => {
  const pane = t.start();
  await t.standIn(pane, 'codex', SCREENS.codexIdle);
  expect(hook(pane, ['codex', 'UserPromptSubmit'], '{"session_id":"s1"}')).toEqual({ status: 0, stdout: '', stderr: '' });
  expect(t.option(pane, '@agent_state')).toBe('working');
  expect(t.option(pane, '@agent_source')).toBe('hook');
  expect(hook(pane, ['codex', 'notify', '{"type":"agent-turn-complete","turn-id":"7"}'])).toEqual({ status: 0, stdout: '', stderr: '' });
  expect(t.option(pane, '@agent_state')).toBe('idle');
  expect(t.option(pane, '@agent_attention')).toBe('1');
  expect(Number(t.option(pane, '@agent_turn_at'))).toBeGreaterThan(0);
});

it('tma event is silent and exits 0 whatever it is given', async () => {
  const pane = t.start();
  for (const args of [
    ['event', '--agent', 'nosuch', '--kind', 'Stop'],
    ['event', '--agent', 'claude', '--kind', 'Stop', '--payload', '/nonexistent'],
    ['event', '--bogus'],
    ['-L', 'no-such-server-here', 'event', '--agent', 'claude', '--kind', 'Stop'],
  ]) {
    const r = await tma(args, { env: { TMUX_PANE: pane }, input: 'not json' });
    expect(r).toEqual({ code: 0, stdout: '', stderr: '' });
  }
  expect(t.option(pane, '@agent_state')).toBe('');
});

it('a Notification only blocks on a permission payload (the matcher), and records nothing else', async () => {
  const pane = t.start();
  await t.standIn(pane, 'claude', SCREENS.claudeIdle);
  hook(pane, ['claude', 'Notification'], '{"notification_type":"idle_prompt"}');
  expect(t.option(pane, '@agent_state')).toBe('');
  hook(pane, ['claude', 'Notification'], '{"notification_type":"permission_prompt"}');
  expect(t.option(pane, '@agent_state')).toBe('blocked');
  expect(t.option(pane, '@agent_detail')).toBe('permission');
});

it('ls text, status formats and version', async () => {
  const pane = t.start();
  await t.standIn(pane, 'claude', SCREENS.claudeBlocked);
  const ls = await tma(['-L', t.name, 'ls']);
  const cols = ls.stdout.replace(/\n$/, '').split('\t');
  expect(cols).toHaveLength(12);
  expect(cols.slice(0, 4)).toEqual([pane, 'claude', 'blocked', 'permission']);
  expect(cols[5]).toBe('main:0.0');
  const plain = await tma(['-L', t.name, 'status', '--format', 'plain']);
  expect(plain.stdout).toBe('⚑1\n');
  const json = JSON.parse((await tma(['-L', t.name, 'status', '--format', 'json'])).stdout);
  expect(json.counts.blocked).toBe(1);
  expect((await tma(['-L', t.name, 'status', '--format', 'xml'])).code).toBe(2);
  expect((await tma(['-L', t.name, 'ls', '--state', 'spinning'])).code).toBe(2);
  expect((await tma(['ls', '--host', 'x'])).code).toBe(2);
  expect((await tma(['version'])).stdout).toMatch(/^tma \d+\.\d+\.\d+\n$/);
});

it('clear-attention unsets the arrival pane and, after select-pane, the pane left behind', async () => {
  const a = t.start();
  t.tmux('split-window', '-d', '-t', a);
  const b = t
    .tmux('list-panes', '-t', a, '-F', '#{pane_id}')
    .trim()
    .split('\n')
    .find((p) => p !== a)!;
  for (const p of [a, b]) t.tmux('set-option', '-p', '-t', p, '@agent_attention', '1');
  // Move to b, then back to a: a is the arrival, b the pane just left.
  t.tmux('select-pane', '-t', b);
  t.tmux('select-pane', '-t', a);
  const r = await tma(['-L', t.name, 'clear-attention', a], { env: { TMA_HOOK_KIND: 'after-select-pane' } });
  expect(r).toEqual({ code: 0, stdout: '', stderr: '' });
  expect(t.option(a, '@agent_attention')).toBe('');
  expect(t.option(b, '@agent_attention')).toBe('');
  // A session switch clears only the arrival.
  for (const p of [a, b]) t.tmux('set-option', '-p', '-t', p, '@agent_attention', '1');
  await tma(['-L', t.name, 'clear-attention', a], { env: { TMA_HOOK_KIND: 'client-session-changed' } });
  expect(t.option(a, '@agent_attention')).toBe('');
  expect(t.option(b, '@agent_attention')).toBe('1');
});

// Every JSON document a one-shot verb writes, as the verb writes it: `schema` first, then the
// exact keys in their contract order (toEqual on objects would not notice a reordering).
const ROW = [
  'pane',
  'agent',
  'state',
  'detail',
  'since',
  'since_ms',
  'episode_ms',
  'locator',
  'title',
  'attention',
  'done',
  'session',
  'transcript',
  'permission_request',
  'stamped_at_ms',
  'context',
  'context_at_ms',
  'muted',
  'tokens',
  'quota',
  'cost_usd',
  'repo',
  'branch',
  'worktree',
  'pending_tool',
  'pending_call',
  'pending_summary',
  'server',
  'host',
  'prompt_id',
];

it('ls --json and status --format json: exact key sets in order, from the verbs themselves', async () => {
  const pane = t.start();
  await t.standIn(pane, 'claude', SCREENS.claudeBlocked);
  const ls = await tma(['-L', t.name, 'ls', '--json']);
  expect(ls.code).toBe(0);
  expect(ls.stdout.endsWith('}\n')).toBe(true);
  const doc = JSON.parse(ls.stdout) as { agents: Record<string, unknown>[] };
  expect(Object.keys(doc)).toEqual(['schema', 'agents']);
  expect(doc.agents).toHaveLength(1);
  expect(Object.keys(doc.agents[0]!)).toEqual(ROW);
  // An empty scope is still the whole document.
  expect((await tma(['-L', t.name, 'ls', '--json', '--state', 'idle'])).stdout).toBe('{"schema":1,"agents":[]}\n');

  const status = await tma(['-L', t.name, 'status', '--format', 'json']);
  expect(status.stdout).toBe('{"schema":1,"counts":{"working":0,"blocked":1,"idle":0,"unknown":0,"done":0},"context_max":null}\n');
});

it('doctor --json: the grouped key set and every nested key set, in code order', async () => {
  const pane = t.start();
  await t.standIn(pane, 'claude', SCREENS.claudeIdle);
  const remote = t.newPane();
  await t.standIn(remote, 'ssh', SCREENS.plainNode);
  const nested = t.newPane();
  await t.standIn(nested, 'tmux', SCREENS.plainNode);
  const ignored = t.newPane();
  t.tmux('set-option', '-p', '-t', ignored, '@agent_ignore', 'yes');
  const broken = t.newPane();
  for (const [k, v] of [
    ['@agent_name', 'claude'],
    ['@agent_state', 'spinning'],
    ['@agent_stamped_at', String(Date.now())],
  ]) {
    t.tmux('set-option', '-p', '-t', broken, k!, v!);
  }
  const xdg = join(t.dir, 'xdg');
  mkdirSync(join(xdg, 'tma', 'actions'), { recursive: true });
  writeFileSync(join(xdg, 'tma', 'actions', 'junk.toml'), 'name = \n');
  await tma(['-L', t.name, 'ls']);

  const r = await tma(['-L', t.name, 'doctor', '--json'], { env: { XDG_CONFIG_HOME: xdg } });
  expect(r.code).toBe(0);
  const d = JSON.parse(r.stdout) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  expect(Object.keys(d)).toEqual([
    'schema',
    'tmux',
    'daemon',
    'ambient_driver',
    'clients',
    'status_option',
    'mouse',
    'watch',
    'wrapper',
    'notify',
    'process_walk',
    'tmux_hooks',
    'manifests',
    'process_name_issues',
    'nested_multiplexers',
    'remote_panes',
    'ignored_panes',
    'stamp_issues',
    'agents',
    'actions',
    'hook_wiring',
    'heartbeat',
    'output_watch',
  ]);
  expect(d.schema).toBe(1);
  const keys = (o: unknown) => Object.keys(o as object);
  expect(keys(d.tmux)).toEqual(['version', 'min_version', 'below_min']);
  expect(keys(d.daemon)).toEqual(['alive', 'socket', 'version', 'version_matches']);
  expect(keys(d.ambient_driver)).toEqual(['polling', 'last_poll_age_ms']);
  expect(keys(d.clients)).toEqual(['attached']);
  expect(keys(d.status_option)).toEqual(['enabled']);
  expect(keys(d.mouse)).toEqual(['bindings_installed', 'enabled']);
  expect(keys(d.watch)).toEqual(['running', 'watchers']);
  expect(keys(d.wrapper)).toEqual(['path', 'reference', 'present']);
  expect(d.notify).toEqual({ last_failure: null });
  expect(keys(d.process_walk)).toEqual(['ok', 'error']);
  expect(Array.isArray(d.tmux_hooks)).toBe(true);
  expect(keys(d.manifests)).toEqual(['ok', 'issues']);
  expect(Array.isArray(d.process_name_issues)).toBe(true);
  expect(d.nested_multiplexers.map(keys)).toEqual([['pane', 'locator', 'command']]);
  expect(d.nested_multiplexers[0].pane).toBe(nested);
  expect(d.remote_panes.map(keys)).toEqual([['pane', 'locator', 'command', 'stamped']]);
  expect(d.remote_panes[0]).toMatchObject({ pane: remote, command: 'ssh', stamped: false });
  expect(d.ignored_panes.map(keys)).toEqual([['pane', 'locator', 'value']]);
  expect(d.ignored_panes[0]).toMatchObject({ pane: ignored, value: 'yes' });
  expect(d.stamp_issues.map(keys)).toEqual([['pane', 'locator', 'problem']]);
  expect(d.agents.map((a: { pane: string }) => a.pane)).toEqual([pane]);
  expect(keys(d.agents[0])).toEqual([
    'pane',
    'agent',
    'locator',
    'state',
    'source',
    'evidence_age_ms',
    'hook_status',
    'hooks_wired',
    'model',
    'window_covered',
    'endpoint_ok',
    'hook_demoted',
    'tier',
    'tier_reason',
    'approve_reachable',
    'approve_reason',
    'answer_lane',
    'hook_lane',
  ]);
  expect(keys(d.actions)).toEqual(['ok', 'issues']);
  expect(d.actions.issues.map(keys)).toEqual([['file', 'problem']]);
  // No collector runs here: no heartbeat, and no session's output is watched.
  expect(d.heartbeat).toEqual({ age_ms: null, fresh: false });
  expect(keys(d.output_watch)).toEqual(['live', 'sessions']);
  expect(d.output_watch.live).toBe(false);
  expect(d.output_watch.sessions.map(keys)).toEqual([['session', 'output_clients']]);
  expect(d.output_watch.sessions[0].output_clients).toBe(0);
});

it('doctor --exit-code counts a global status line switched off as a warning', async () => {
  const pane = t.start();
  await t.standIn(pane, 'claude', SCREENS.claudeIdle);
  await tma(['-L', t.name, 'ls']);
  expect((await tma(['-L', t.name, 'doctor', '--exit-code'])).code).toBe(0);
  t.tmux('set-option', '-g', 'status', 'off');
  const r = await tma(['-L', t.name, 'doctor', '--exit-code']);
  expect(r.stdout).toContain('\nstatus: ');
  expect(r.stderr).toBe('tma: doctor: 1 warning(s), 0 pane(s) below the expected tier\n');
  expect(r.code).toBe(1);
  // Without --exit-code the report is still a success.
  expect((await tma(['-L', t.name, 'doctor'])).code).toBe(0);
});

it('--debug-timing puts cycle stats on stderr for ls and status, before or after the verb; stdout is unchanged', async () => {
  const pane = t.start();
  await t.standIn(pane, 'claude', SCREENS.claudeBlocked);
  const plain = await tma(['-L', t.name, 'ls']);
  expect(plain.stderr).toBe('');
  for (const args of [
    ['--debug-timing', 'ls'],
    ['status', '--format', 'plain', '--debug-timing'],
  ]) {
    const r = await tma(['-L', t.name, ...args]);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/^tma: cycle: \d+\.\d ms, 1 pane\(s\) \(1 [a-z]+\), 1 agent\(s\)\n$/);
  }
  expect((await tma(['-L', t.name, '--debug-timing', 'ls'])).stdout.split('\t').slice(0, 3)).toEqual(plain.stdout.split('\t').slice(0, 3));
  expect((await tma(['-L', t.name, 'status', '--format', 'plain', '--debug-timing'])).stdout).toBe('⚑1\n');
});
