// The rest of one-command setup on real files and a real tmux server: the JS bridges forwarding
// to a wrapper, `init --yes`, `jump` for an attached client, and bash completion.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { ScratchTmux, tma, waitFor } from '../support/scratch-tmux.js';
import { SCREENS } from '../support/screens.js';

let t: ScratchTmux;
let home: string;
let client: ChildProcess | null = null;
beforeEach(() => {
  t = new ScratchTmux('su');
  home = mkdtempSync(join(tmpdir(), 'tma-home-'));
});
afterEach(() => {
  client?.kill('SIGKILL');
  client = null;
  t.kill();
  rmSync(home, { recursive: true, force: true });
});

const env = (extra: NodeJS.ProcessEnv = {}) => ({ HOME: home, XDG_CONFIG_HOME: join(home, '.config'), TMA_CONFIG_DIR: '', ...extra });
const run = (args: string[], extra: NodeJS.ProcessEnv = {}) => tma(['-L', t.name, ...args], { env: env(extra) });

it('the OpenCode plugin and the pi extension load in Node and hand events to the wrapper', async () => {
  t.start();
  const wrapper = join(home, 'wrap', 'tma-hook');
  for (const agent of ['opencode', 'pi']) expect((await run(['install-hooks', agent, '--yes', '--wrapper-path', wrapper])).code).toBe(0);
  // A stub in the wrapper's place logs what it is handed.
  const log = join(home, 'calls.log');
  writeFileSync(wrapper, `#!/bin/sh\nprintf '%s %s %s\\n' "$1" "$2" "$(cat)" >> '${log}'\n`);
  chmodSync(wrapper, 0o755);
  const plugin = join(home, '.config/opencode/plugin/tma.js');
  const ext = join(home, '.pi/agent/extensions/tma.js');
  const node = (code: string, extra: NodeJS.ProcessEnv = {}) =>
    spawnSync(process.execPath, ['--input-type=module', '-e', code], { env: { ...process.env, ...extra }, encoding: 'utf8', timeout: 15_000 });
  const oc = node(`
    const { TmaBridge } = await import(${JSON.stringify(plugin)});
    const hooks = await TmaBridge({ serverUrl: new URL('http://127.0.0.1:4096/') });
    await hooks.event({ event: { type: 'permission.asked', properties: { sessionID: 'ses_1', permission: 'bash', id: 'per_7' } } });
    await hooks.event({ event: { type: 'session.status', properties: { sessionID: 'ses_1', status: { type: 'busy' } } } });
  `);
  expect(oc.status, oc.stderr).toBe(0);
  const pi = node(
    `
    const bridge = (await import(${JSON.stringify(ext)})).default;
    const on = {};
    bridge({ on: (name, fn) => { on[name] = fn; } });
    const ctx = { sessionManager: { getSessionId: () => 'pi-9' }, getContextUsage: () => ({ tokens: 500, contextWindow: 1000, percent: 50 }) };
    await on.agent_settled({}, ctx);
  `,
    { TMUX_PANE: '%1' },
  );
  expect(pi.status, pi.stderr).toBe(0);
  const want = [
    'opencode session-start {"session_id":"","api_endpoint":"http://127.0.0.1:4096"}',
    'opencode permission-required {"session_id":"ses_1","permission":"bash","request_id":"per_7"}',
    'opencode user-prompt-submit {"session_id":"ses_1"}',
    'pi agent_settled {"session_id":"pi-9"}',
    'pi context {"session_id":"pi-9","context_usage":{"tokens":500,"contextWindow":1000,"percent":50}}',
  ];
  await waitFor(() => existsSync(log) && readFileSync(log, 'utf8').trim().split('\n').length >= want.length, 'bridge calls');
  expect(readFileSync(log, 'utf8').trim().split('\n').sort()).toEqual([...want].sort());
  // Outside tmux the pi extension registers nothing.
  const none = node(`const b = (await import(${JSON.stringify(ext)})).default; let n = 0; b({ on: () => n++ }); if (n) process.exit(3);`, { TMUX_PANE: '' });
  expect(none.status).toBe(0);
});

it('init --yes wires the agents found on $PATH, installs keys and tmux hooks, and doctor is clean', async () => {
  t.start();
  const bin = join(home, 'agents-bin');
  mkdirSync(bin);
  for (const name of ['claude', 'codex']) {
    writeFileSync(join(bin, name), '#!/bin/sh\nexit 0\n');
    chmodSync(join(bin, name), 0o755);
  }
  const r = await run(['init', '--yes'], { PATH: `${bin}:${process.env.PATH}` });
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toMatch(/ {2}claude {3}found \(.*agents-bin\/claude\)/);
  expect(r.stdout).toMatch(/ {2}codex {4}found/);
  expect(r.stdout).toMatch(/ {2}gemini {3}not found/);
  expect(r.stdout).toContain('tma: installed hooks for claude');
  expect(r.stdout).toContain('tma: installed hooks for codex');
  expect(r.stdout).toContain("set -g status-right '#(tma status)");
  expect(r.stdout).toContain('tma: doctor:');
  expect(readFileSync(join(home, '.codex/config.toml'), 'utf8')).toMatch(/^notify = \[".*tma-hook", "codex", "notify"\]\n$/);
  expect(readFileSync(join(home, '.config/tma/tmux.conf'), 'utf8')).toContain('tma keybindings');
  const conf = readFileSync(join(home, '.config/tmux/tmux.conf'), 'utf8');
  expect(conf).toBe('source-file -q "$XDG_CONFIG_HOME/tma/tmux.conf" "$HOME/.config/tma/tmux.conf" # tma keys\n');
  expect(t.tmux('show-hooks', '-g', 'after-select-pane')).toContain('clear-attention');
  // The key file loads in tmux as written.
  t.tmux('source-file', join(home, '.config/tma/tmux.conf'));
  expect(t.tmux('list-keys', '-T', 'prefix', 'j')).toContain('jump --attention');
  expect((await run(['install-keys', '--check'])).stdout).toBe('tma: keybindings OK\n');
  const doctor = await run(['doctor', '--exit-code']);
  expect(doctor.stderr).toBe('');
  expect(doctor.code).toBe(0);
  expect(doctor.stdout).toMatch(/^hooks: claude wired, .*codex wired/m);
  // Keys come out as cleanly as they went in.
  expect((await run(['install-keys', '--uninstall', '--yes'])).code).toBe(0);
  expect(readFileSync(join(home, '.config/tmux/tmux.conf'), 'utf8')).toBe('');
  expect(existsSync(join(home, '.config/tma/tmux.conf'))).toBe(false);
});

it('jump --attention takes an attached client to the oldest blocked pane, and --back returns', async () => {
  const origin = t.start();
  const younger = t.newPane();
  const older = t.newPane();
  await t.standIn(origin, 'claude', SCREENS.claudeIdle);
  await t.standIn(older, 'codex', SCREENS.codexBlocked);
  // Stamp the first blocked pane before the second one blocks, so their ages differ.
  expect((await run(['ls'])).code).toBe(0);
  await new Promise((r) => setTimeout(r, 1100));
  await t.standIn(younger, 'claude', SCREENS.claudeBlocked);
  client = spawn('script', ['-qfc', `tmux -L ${t.name} attach -t main`, '/dev/null'], {
    env: { ...process.env, TMUX: '', TERM: 'xterm' },
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  // What the client's terminal shows, so the test can see the menu open.
  let screen = '';
  client.stdout!.on('data', (b: Buffer) => (screen += b.toString('latin1')));
  let name = '';
  await waitFor(() => (name = t.tmux('list-clients', '-F', '#{client_name}').trim()) !== '', 'an attached client');
  const at = () => t.tmux('display-message', '-p', '-c', name, '#{pane_id}').trim();
  expect(at()).toBe(origin);
  const j = await run(['jump', '--attention', '--client', name]);
  expect(j).toMatchObject({ code: 0, stdout: '', stderr: '' });
  expect(at()).toBe(older);
  const back = await run(['jump', '--back', '--client', name]);
  expect(back.code).toBe(0);
  expect(at()).toBe(origin);
  expect((await run(['jump', '--back', '--client', name])).stderr).toBe('tma: no jump origin recorded\n');
  expect((await run(['jump', '--attention', '--back'])).code).toBe(2);
  // The menu opens on the client, blocked agents first; its key 1 picks the oldest one.
  const m = run(['jump', '--menu', '--client', name]);
  screen = '';
  await waitFor(() => screen.includes('tma jump'), 'the menu drawn on the client', 15_000);
  client.stdin!.write('1');
  expect(await m).toMatchObject({ code: 0, stderr: '' });
  await waitFor(() => at() === older, 'the menu choice focused', 15_000);
});

it('jump --menu gives up after --menu-timeout and takes its menu off the screen', async () => {
  const origin = t.start();
  const other = t.newPane();
  await t.standIn(other, 'claude', SCREENS.claudeBlocked);
  client = spawn('script', ['-qfc', `tmux -L ${t.name} attach -t main`, '/dev/null'], {
    env: { ...process.env, TMUX: '', TERM: 'xterm' },
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  let screen = '';
  client.stdout!.on('data', (b: Buffer) => (screen += b.toString('latin1')));
  let name = '';
  await waitFor(() => (name = t.tmux('list-clients', '-F', '#{client_name}').trim()) !== '', 'an attached client');
  const at = () => t.tmux('display-message', '-p', '-c', name, '#{pane_id}').trim();
  expect(at()).toBe(origin);
  expect((await run(['jump', '--menu-timeout', '5'])).code).toBe(2);
  expect((await run(['jump', '--menu', '--menu-timeout', 'soon'])).stderr).toContain('--menu-timeout takes seconds');
  const started = Date.now();
  const m = run(['jump', '--menu', '--client', name, '--menu-timeout', '1.5']);
  await waitFor(() => screen.includes('tma jump'), 'the menu drawn on the client', 15_000);
  const r = await m;
  const took = Date.now() - started;
  expect(r).toMatchObject({ code: 0, stderr: 'tma: jump menu closed after 1.5 s with nothing chosen\n' });
  expect(took).toBeGreaterThanOrEqual(1500);
  expect(took).toBeLessThan(10_000);
  // The menu went with it: its key 1 would have focused the other pane; now it goes to the shell.
  client.stdin!.write('1');
  await new Promise((res) => setTimeout(res, 1000));
  expect(at()).toBe(origin);
  // The bound can come from tmux's global environment too, as a key binding's run-shell sees it.
  const e = await run(['jump', '--menu', '--client', name], { TMA_JUMP_MENU_TIMEOUT: '1' });
  expect(e.stderr).toBe('tma: jump menu closed after 1 s with nothing chosen\n');
});

it('completions bash sources cleanly and completes `tma ac` to `tma act`', async () => {
  const r = await tma(['completions', 'bash']);
  expect(r.code).toBe(0);
  const script = join(home, 'tma.bash');
  writeFileSync(script, r.stdout);
  const out = spawnSync(
    'bash',
    [
      '--norc',
      '--noprofile',
      '-c',
      `source '${script}' || exit 9; COMP_WORDS=(tma ac); COMP_CWORD=1; _tma; printf '%s\\n' "\${COMPREPLY[@]}"; complete -p tma`,
    ],
    { encoding: 'utf8', timeout: 10_000 },
  );
  expect(out.stderr).toBe('');
  expect(out.status).toBe(0);
  expect(out.stdout).toBe('act\ncomplete -F _tma tma\n');
  expect((await tma(['completions', 'tcsh'])).code).toBe(2);
});

it('per-verb help, a suggestion for a mistyped verb, and stray words as usage errors', async () => {
  const help = await tma(['jump', '--help']);
  expect(help.code).toBe(0);
  expect(help.stdout).toMatch(/^usage: tma jump \[--attention/);
  expect(help.stdout).toContain('tma jump --back');
  expect((await tma(['help', 'jump'])).stdout).toBe(help.stdout);
  expect(await tma(['jmp'])).toMatchObject({ code: 2, stderr: 'tma: unknown command "jmp"; did you mean "jump"?\n' });
  const stray = await tma(['doctor', 'now']);
  expect(stray.code).toBe(2);
  expect(stray.stderr).toContain('doctor takes no arguments');
});
