// install-hooks against real files in a scratch HOME and a real tmux server: only our lines are
// added, a second run changes no byte, --check tells stale from current, uninstall restores.

import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { REPO, ScratchTmux, tma } from '../support/scratch-tmux.js';
import { SCREENS } from '../support/screens.js';

let t: ScratchTmux;
let home: string;
beforeEach(() => {
  t = new ScratchTmux('ih');
  t.start();
  home = mkdtempSync(join(tmpdir(), 'tma-home-'));
});
afterEach(() => {
  t.kill();
  rmSync(home, { recursive: true, force: true });
});

const env = () => ({ HOME: home, XDG_CONFIG_HOME: join(home, '.config'), TMA_CONFIG_DIR: '', CODEX_HOME: '', PI_CODING_AGENT_DIR: '' });
const run = (args: string[], input = '') => tma(['-L', t.name, ...args], { env: env(), input });
const WRAPPER = join(REPO, 'bin/tma-hook');

interface Case {
  agent: string;
  file: string;
  /** Unrelated user config already there; null = the file does not exist yet. */
  seed: string | null;
  label: string;
}

const CASES: Case[] = [
  {
    agent: 'claude',
    file: '.claude/settings.json',
    label: 'agent hooks',
    seed: `${JSON.stringify({ model: 'opus', permissions: { allow: ['Bash(ls:*)'] }, hooks: { Stop: [{ hooks: [{ type: 'command', command: 'notify-send done' }] }] } }, null, 2)}\n`,
  },
  {
    agent: 'gemini',
    file: '.gemini/settings.json',
    label: 'gemini hooks',
    seed: `${JSON.stringify({ theme: 'GitHub', general: { vimMode: true } }, null, 2)}\n`,
  },
  {
    agent: 'cursor',
    file: '.cursor/hooks.json',
    label: 'cursor hooks',
    seed: `${JSON.stringify({ version: 1, hooks: { stop: [{ command: './audit.sh' }] } }, null, 2)}\n`,
  },
  {
    agent: 'codex',
    file: '.codex/config.toml',
    label: 'codex notify',
    seed: '# Codex settings, by hand\nmodel = "o3" # the fast one\napproval_policy = "on-request"\n\n# work profile\n[profiles.work]\nmodel = "gpt-5"\n',
  },
  { agent: 'opencode', file: '.config/opencode/plugin/tma.js', label: 'opencode plugin', seed: null },
  { agent: 'pi', file: '.pi/agent/extensions/tma.js', label: 'pi extension', seed: null },
];

const changedLines = (out: string) => out.split('\n').filter((l) => /^ {2}[-+]/.test(l));

it.each(CASES)('$agent: our additions only, idempotent, checked, and undone', async (c) => {
  const path = join(home, c.file);
  if (c.seed !== null) {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, c.seed);
  }
  const first = await run(['install-hooks', c.agent, '--yes']);
  expect(first.code, first.stderr).toBe(0);
  expect(first.stdout).toContain(`tma: proposed change to ${path} (${c.label}):`);
  const diff = changedLines(first.stdout.split(`(${c.label}):`)[1]!.split('\ntma: ')[0]!);
  expect(diff.length).toBeGreaterThan(0);
  expect(diff.filter((l) => l.startsWith('  -'))).toEqual([]);
  expect(diff.join('\n')).toContain(WRAPPER);
  expect(first.stdout).toContain(`tma: installed hooks for ${c.agent}`);
  // The user's own config is all still there, in order.
  const after = readFileSync(path, 'utf8');
  if (c.seed !== null) {
    const kept = c.seed.split('\n').filter((l) => l.trim() !== '' && !/^\s*[}\]],?$/.test(l));
    let at = 0;
    for (const l of kept) {
      at = after.indexOf(l.replace(/,$/, ''), at);
      expect(at, l).toBeGreaterThanOrEqual(0);
    }
  }
  // A second run: nothing to change, not a byte.
  const files = () =>
    CASES.map((x) => join(home, x.file))
      .concat(join(home, '.codex/hooks.json'))
      .map((f) => (existsSync(f) ? readFileSync(f, 'utf8') : null));
  const snapshot = files();
  const second = await run(['install-hooks', c.agent, '--yes']);
  expect(second.code).toBe(0);
  expect(second.stdout).toContain(`tma: ${c.label} already up to date (${path})`);
  expect(second.stdout).not.toContain('proposed change');
  expect(files()).toEqual(snapshot);
  // Checked: fine as installed, named as stale after a hand edit to another wrapper.
  const ok = await run(['install-hooks', '--check', c.agent]);
  expect(ok.stdout + ok.stderr).toBe('tma: hooks OK\n');
  expect(ok.code).toBe(0);
  writeFileSync(path, after.replaceAll(WRAPPER, '/opt/elsewhere/tma-hook'));
  const bad = await run(['install-hooks', '--check', c.agent]);
  expect(bad.code).toBe(1);
  expect(bad.stderr).toMatch(/tma: hook wiring incomplete:\n {2}- /);
  expect(bad.stderr).toMatch(/different|stale/);
  expect(bad.stderr).toContain(`agent ${c.agent}`);
  // Uninstall knows ours by the wrapper's name, wherever it points, and gives the user's bytes back.
  const un = await run(['install-hooks', c.agent, '--uninstall', '--yes']);
  expect(un.code, un.stderr).toBe(0);
  if (c.seed === null) expect(existsSync(path)).toBe(false);
  else expect(readFileSync(path, 'utf8')).toBe(c.seed);
  expect(t.tmux('show-hooks', '-g', 'after-select-pane')).not.toContain('clear-attention');
});

/** A settings.json as people write it by hand: odd indents, spacing, key order and a blank line. */
const HAND = `{
   "model":"opus",

   "permissions" : {
         "allow": [ "Bash(ls:*)",  "Read" ],
         "deny":[]
   },
   "hooks": {
      "Stop": [
         { "hooks": [ { "type": "command", "command": "say done" } ] }
      ]
   },
   "env": {"A": "\\u00e9"}
}`;

it('a hand-formatted settings.json keeps its layout but for our entries, and is backed up first, byte for byte', async () => {
  const path = join(home, '.claude/settings.json');
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, HAND, { mode: 0o600 });
  const r = await run(['install-hooks', 'claude', '--yes']);
  expect(r.code, r.stderr).toBe(0);
  const bak = `${path}.tma-bak`;
  expect(r.stdout).toContain(`tma: the previous ${path} is kept at ${bak}\n`);
  expect(readFileSync(bak)).toEqual(Buffer.from(HAND));
  expect(statSync(bak).mode & 0o777).toBe(0o600);
  // Every line of the user's is still there, as written and in order; the end of a list or
  // entry that our entries now follow gains only the comma that joins them on, and nothing is
  // added but our entries.
  const after = readFileSync(path, 'utf8');
  const ours = JSON.parse(after) as { hooks: Record<string, unknown[]> };
  expect(Object.keys(ours.hooks)[0]).toBe('Stop');
  expect(ours.hooks.Stop).toHaveLength(2);
  const lines = after.split('\n');
  const gained: string[] = [];
  let at = 0;
  for (const l of HAND.split('\n')) {
    const i = lines.findIndex((x, k) => k >= at && (x === l || x === `${l},`));
    expect(i, `line kept: ${l}`).toBeGreaterThanOrEqual(0);
    if (lines[i] !== l) gained.push(l);
    for (const added of lines.slice(at, i)) expect(added, 'only our entries are added').toMatch(/^\s*([{}[\],]*|"(hooks|type|command|[A-Z][A-Za-z]+)": .*)$/);
    at = i + 1;
  }
  expect(gained).toEqual(['         { "hooks": [ { "type": "command", "command": "say done" } ] }', '      ]']);
  expect(lines.slice(at)).toEqual([]);
  // Uninstall gives the user's bytes back, and keeps the installed file as the backup now.
  const un = await run(['install-hooks', 'claude', '--uninstall', '--yes']);
  expect(un.code, un.stderr).toBe(0);
  expect(readFileSync(path, 'utf8')).toBe(HAND);
  expect(un.stdout).toContain(`tma: the previous ${path} is kept at ${bak} (replacing an older backup)\n`);
  expect(readFileSync(bak, 'utf8')).toBe(after);
});

it("codex's config.toml is backed up before its edit, and a file created new has nothing to back up", async () => {
  const toml = join(home, '.codex/config.toml');
  const seed = '# by hand\nmodel   =   "o3"\n\n[profiles.work]\nmodel = "gpt-5"\n';
  mkdirSync(dirname(toml), { recursive: true });
  writeFileSync(toml, seed);
  const r = await run(['install-hooks', 'codex', '--yes']);
  expect(r.code, r.stderr).toBe(0);
  expect(readFileSync(`${toml}.tma-bak`, 'utf8')).toBe(seed);
  expect(r.stdout).toContain(`is kept at ${toml}.tma-bak`);
  // hooks.json did not exist: it is created, with no backup and no word of one.
  const hooks = join(home, '.codex/hooks.json');
  expect(existsSync(hooks)).toBe(true);
  expect(existsSync(`${hooks}.tma-bak`)).toBe(false);
  expect(r.stdout).not.toContain(`${hooks} is kept`);
});

it('the tmux attention hooks: installed once, recorded, told apart when wiped, removed with the agent', async () => {
  expect((await run(['install-hooks', 'claude', '--yes'])).code).toBe(0);
  expect((await run(['install-hooks', 'gemini', '--yes'])).code).toBe(0);
  for (const h of ['after-select-pane', 'session-window-changed']) {
    expect(t.tmux('show-hooks', '-g', h).match(/clear-attention/g)?.length).toBe(2); // the if/else pair, once
  }
  const state = readFileSync(
    join(
      home,
      '.config/tma',
      (await import('node:fs')).readdirSync(join(home, '.config/tma')).find((f) => f.startsWith('hooks-state-'))!,
    ),
    'utf8',
  );
  expect(state).toMatch(/\[\[tmux_hooks\]\]\nhook = "after-select-pane"\nindex = 0/);
  let doc = JSON.parse((await run(['doctor', '--json'])).stdout);
  expect(doc.tmux_hooks).toEqual([
    { hook: 'after-select-pane', present: true, hook_state: 'present' },
    { hook: 'session-window-changed', present: true, hook_state: 'present' },
  ]);
  expect(doc.hook_wiring.find((w: { agent: string }) => w.agent === 'claude').hook_status).toBe('wired');
  // A server restart loses them: doctor says wiped, and --exit-code counts it.
  t.tmux('set-hook', '-gu', 'after-select-pane');
  doc = JSON.parse((await run(['doctor', '--json'])).stdout);
  expect(doc.tmux_hooks[0]).toEqual({ hook: 'after-select-pane', present: false, hook_state: 'wiped' });
  expect((await run(['doctor', '--exit-code'])).code).toBe(1);
  expect((await run(['install-hooks', '--all', '--yes'])).code).toBe(0);
  expect(JSON.parse((await run(['doctor', '--json'])).stdout).tmux_hooks[0].hook_state).toBe('present');
  expect((await run(['install-hooks', 'claude', '--uninstall', '--yes'])).code).toBe(0);
  expect(t.tmux('show-hooks', '-g', 'session-window-changed')).not.toContain('clear-attention');
});

it('a declined prompt writes nothing and fails; a foreign codex notify is refused', async () => {
  const r = await run(['install-hooks', 'claude'], 'n\n');
  expect(r.code).toBe(1);
  expect(r.stdout).toContain('Apply this change? [y/N] ');
  expect(r.stdout).toContain('tma: aborted; no changes written');
  expect(existsSync(join(home, '.claude/settings.json'))).toBe(false);
  mkdirSync(join(home, '.codex'));
  writeFileSync(join(home, '.codex/config.toml'), 'notify = ["notify-send", "codex"]\n');
  const codex = await run(['install-hooks', 'codex', '--yes']);
  expect(codex.code).toBe(1);
  expect(codex.stderr).toMatch(/only one/);
  expect(existsSync(join(home, '.codex/hooks.json'))).toBe(false);
  expect((await run(['install-hooks', 'nosuch'])).stderr).toBe('tma: no manifest for agent "nosuch"\n');
});

it('after install-hooks claude, the installed command line run as Claude runs it moves the pane', async () => {
  const pane = t.tmux('display-message', '-p', '-t', 'main', '#{pane_id}').trim();
  await t.standIn(pane, 'claude', SCREENS.claudeIdle);
  expect((await run(['install-hooks', 'claude', '--yes'])).code).toBe(0);
  const settings = JSON.parse(readFileSync(join(home, '.claude/settings.json'), 'utf8'));
  const command = (event: string): string => settings.hooks[event][0].hooks[0].command;
  // Claude runs each hook through a shell, inside the pane's environment, with JSON on stdin.
  const fire = (event: string, payload: object) =>
    spawnSync('/bin/sh', ['-c', command(event)], {
      input: JSON.stringify(payload),
      env: { PATH: process.env.PATH, HOME: home, TMUX: `${t.socketPath()},1,0`, TMUX_PANE: pane },
      timeout: 15_000,
    }).status;
  expect(fire('UserPromptSubmit', { session_id: 's-1', hook_event_name: 'UserPromptSubmit', prompt: 'hi' })).toBe(0);
  expect(t.option(pane, '@agent_state')).toBe('working');
  expect(t.option(pane, '@agent_source')).toBe('hook');
  expect(fire('Notification', { session_id: 's-1', hook_event_name: 'Notification', notification_type: 'permission_prompt' })).toBe(0);
  expect(t.option(pane, '@agent_state')).toBe('blocked');
  // The last agent unwired: tma's stamps leave the panes with it.
  const un = await run(['install-hooks', 'claude', '--uninstall', '--yes']);
  expect(un.stdout).toContain("tma: cleared tma's options from 1 pane(s)");
  expect(t.option(pane, '@agent_state')).toBe('');
  expect(t.option(pane, '@agent_name')).toBe('');
});

it("--statusline wraps Claude's status line, a plain re-install keeps it, --no-statusline restores it", async () => {
  const path = join(home, '.claude/settings.json');
  mkdirSync(join(home, '.claude'));
  const user = '{\n  "statusLine": {\n    "type": "command",\n    "command": "~/bin/my-line"\n  }\n}\n';
  writeFileSync(path, user);
  const r = await run(['install-hooks', 'claude', '--statusline', '--yes']);
  expect(r.stdout).toContain('(agent hooks + statusline context shim):');
  expect(JSON.parse(readFileSync(path, 'utf8')).statusLine.command).toMatch(/--kind context .* \| ~\/bin\/my-line$/);
  expect((await run(['install-hooks', 'claude', '--yes'])).stdout).toContain('already up to date');
  expect((await run(['install-hooks', '--check', 'claude'])).code).toBe(0);
  expect((await run(['install-hooks', 'claude', '--no-statusline', '--yes'])).code).toBe(0);
  expect(JSON.parse(readFileSync(path, 'utf8')).statusLine.command).toBe('~/bin/my-line');
  expect((await run(['install-hooks', '--check', 'claude'])).code).toBe(0);
});
