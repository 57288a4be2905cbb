// The engine on a real tmux server: stand-in agents painted from our fixtures, `tma ls --json`
// read back, and the pane options checked as another tool would see them.

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadManifestSet } from '../../collector/core/manifest-load.js';
import { DEFAULT_FOLD } from '../../collector/core/types.js';
import { Engine } from '../../collector/engine/cycle.js';
import { bundledManifestDir, readManifestFiles } from '../../collector/manifest-files.js';
import { readProcesses } from '../../collector/tmux/proc-table.js';
import { openRunner, type TmuxRunner } from '../../collector/tmux/runner.js';
import { ScratchTmux, tma, waitFor } from '../support/scratch-tmux.js';
import { SCREENS } from '../support/screens.js';

let t: ScratchTmux;
let config: string;

beforeEach(() => {
  t = new ScratchTmux('eng');
  // Every call re-detects (no 3 s reuse) and idle follows working at once (no dwell).
  config = join(t.dir, 'config.toml');
  writeFileSync(config, '[fold]\nfreshness_secs = 0\ndwell_secs = 0\n');
});
afterEach(() => t.kill());

interface Row {
  pane: string;
  agent: string;
  state: string;
  detail: string | null;
  since: number;
  attention: boolean;
  done: boolean;
  server: string;
  host: string;
  title: string;
}

let lastCall = 0;

/**
 * Two cycles in one wall-clock second are a stampede: the second only reads stamps. A test that
 * wants a fresh verdict waits for the next second first, as a status line polling at 1 Hz would.
 */
async function nextSecond(): Promise<void> {
  const wait = Math.floor(lastCall / 1000) * 1000 + 1000 - Date.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait + 5));
  lastCall = Date.now();
}

/** The previous verb's cycle ran at some moment before it returned: the next waits for the second after that. */
function returned(): void {
  lastCall = Date.now();
}

async function ls(server = t.name, extra: string[] = []): Promise<Row[]> {
  await nextSecond();
  const r = await tma(['-L', server, '--config', config, 'ls', '--json', ...extra]);
  returned();
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return (JSON.parse(r.stdout) as { agents: Row[] }).agents;
}

async function rowOf(pane: string): Promise<Row | undefined> {
  return (await ls()).find((r) => r.pane === pane);
}

function event(pane: string, agent: string, kind: string, payload = '{}') {
  return tma(['--socket-name', t.name, 'event', '--agent', agent, '--kind', kind, '--payload', '-'], {
    env: { TMUX_PANE: pane },
    input: payload,
  });
}

describe('each agent is told apart and read right', () => {
  const cases: [string, string, keyof typeof SCREENS, string, string | null][] = [
    ['claude', 'claude', 'claudeBlocked', 'blocked', 'permission'],
    ['codex', 'codex', 'codexWorking', 'working', null],
    ['opencode', 'opencode', 'opencodeIdle', 'idle', null],
    ['gemini', 'node', 'geminiBlocked', 'blocked', 'permission'],
    ['cursor', 'node', 'cursorIdle', 'idle', null],
    ['pi', 'node', 'piWorking', 'working', null],
  ];
  for (const [agent, command, screen, state, detail] of cases) {
    it(`${agent} (${command}) → ${state}`, async () => {
      const pane = t.start();
      await t.standIn(pane, command, SCREENS[screen]);
      const row = await rowOf(pane);
      expect(row).toMatchObject({ agent, state, detail });
      expect(t.option(pane, '@agent_state')).toBe(state);
      expect(t.option(pane, '@agent_name')).toBe(agent);
    });
  }

  it('a bare node process with an unrelated title is not an agent', async () => {
    const pane = t.start();
    await t.standIn(pane, 'node', SCREENS.plainNode);
    expect(await ls()).toEqual([]);
    expect(t.option(pane, '@agent_state')).toBe('');
  });
});

describe('an agent started through a wrapper', () => {
  // `bash -c 'claude; exec bash'`: the wrapper shell leads the terminal's foreground process group,
  // so tmux names `bash`; the agent in that group is the one reading the keys.
  it('is read from its screen, not left unknown because tmux names the shell', async () => {
    const pane = t.start();
    await t.standIn(pane, 'claude', SCREENS.claudeBlocked, { wrapper: true });
    expect(t.tmux('display-message', '-p', '-t', pane, '#{pane_current_command}').trim()).toBe('bash');
    expect(await rowOf(pane)).toMatchObject({ agent: 'claude', state: 'blocked', detail: 'permission' });
    expect(t.option(pane, '@agent_source')).toBe('capture');
  });
});

describe('transitions', () => {
  it('working → idle raises attention (done); → blocked; since holds while the state holds', async () => {
    const pane = t.start();
    const s = await t.standIn(pane, 'claude', SCREENS.claudeWorking);
    const w1 = await rowOf(pane);
    expect(w1).toMatchObject({ state: 'working', attention: false });
    const w2 = await rowOf(pane);
    expect(w2!.since).toBe(w1!.since);

    await s.paint(SCREENS.claudeIdle);
    const idle = await rowOf(pane);
    expect(idle).toMatchObject({ state: 'idle', attention: true, done: true });
    expect(idle!.since).toBeGreaterThan(w1!.since);
    expect(t.option(pane, '@agent_attention')).toBe('1');

    await s.paint(SCREENS.claudeBlocked);
    expect(await rowOf(pane)).toMatchObject({ state: 'blocked', detail: 'permission' });
  });

  it('a hook claim beats the screen, and an older capture never overrides a newer hook claim', async () => {
    const pane = t.start();
    await t.standIn(pane, 'claude', SCREENS.claudeIdle);
    expect((await rowOf(pane))!.state).toBe('idle');
    expect((await event(pane, 'claude', 'UserPromptSubmit')).code).toBe(0);
    expect(t.option(pane, '@agent_source')).toBe('hook');
    // The screen still shows idle chrome, but the agent said it is working.
    expect(await rowOf(pane)).toMatchObject({ state: 'working' });
    expect(await rowOf(pane)).toMatchObject({ state: 'working' });
    expect(t.option(pane, '@agent_state')).toBe('working');
  });

  it('agent exit removes every option of the removal set and updates both rollups', async () => {
    const pane = t.start();
    const other = t.newPane();
    const s = await t.standIn(pane, 'claude', SCREENS.claudeBlocked);
    await t.standIn(other, 'codex', SCREENS.codexWorking);
    await ls();
    expect(t.tmux('show-options', '-v', '-t', pane, '@agent_session_summary').trim()).toBe('blocked:1 working:1');
    expect(t.tmux('show-options', '-wv', '-t', pane, '@agent_summary').trim()).toBe('blocked:1');
    await event(pane, 'claude', 'SessionStart', '{"session_id":"abc","model":"opus"}');
    expect(t.option(pane, '@agent_session')).toBe('abc');

    s.exit();
    await waitFor(() => t.tmux('display-message', '-p', '-t', pane, '#{pane_current_command}').trim() === 'bash', 'shell back');
    // A registered pane is held while only a shell remains (reaper grace); end it as the agent would.
    await event(pane, 'claude', 'SessionEnd', '{"session_id":"abc"}');
    const rows = await ls();
    expect(rows.map((r) => r.pane)).toEqual([other]);
    const left = t
      .tmux('show-options', '-p', '-t', pane)
      .split('\n')
      .filter((l) => l.startsWith('@agent_') || l.startsWith('@tma_'));
    expect(left).toEqual([]);
    expect(t.tmux('show-options', '-v', '-t', pane, '@agent_session_summary').trim()).toBe('working:1');
    expect(t.tmux('show-options', '-wqv', '-t', pane, '@agent_summary').trim()).toBe('');
  });

  it('an unregistered agent that exits is removed on the next cycle', async () => {
    const pane = t.start();
    const s = await t.standIn(pane, 'claude', SCREENS.claudeIdle);
    expect(await ls()).toHaveLength(1);
    s.exit();
    await waitFor(() => t.tmux('display-message', '-p', '-t', pane, '#{pane_current_command}').trim() === 'bash', 'shell back');
    expect(await ls()).toEqual([]);
    expect(t.option(pane, '@agent_state')).toBe('');
    expect(t.option(pane, '@agent_stamped_at')).toBe('');
  });
});

describe('servers, failures and opt-outs', () => {
  it('two tmux servers give distinct server values', async () => {
    const other = new ScratchTmux('eng2');
    try {
      const a = t.start();
      const b = other.start();
      await t.standIn(a, 'claude', SCREENS.claudeIdle);
      await other.standIn(b, 'claude', SCREENS.claudeIdle);
      const [ra] = await ls(t.name);
      const [rb] = await ls(other.name);
      expect(ra!.pane).toBe(rb!.pane);
      expect(ra!.server).not.toBe(rb!.server);
      expect(ra!.server).toBe(t.socketPath());
      expect(rb!.server).toBe(other.socketPath());
    } finally {
      other.kill();
    }
  });

  it('a dead tmux server is exit 1 with a clear message, promptly', async () => {
    t.start();
    t.tmux('kill-server');
    const started = Date.now();
    const r = await tma(['-L', t.name, 'ls', '--json']);
    expect(r.code).toBe(1);
    // Other servers of this user (other test files' scratch servers) may be named as where agents run.
    expect(r.stderr).toMatch(/^tma: no tmux server running(; agents run on -[LS] \S+ \(\d+\)(, -[LS] \S+ \(\d+\))*)?\n$/);
    expect(r.stdout).toBe('');
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('an @agent_ignore pane disappears and loses its stamp', async () => {
    const pane = t.start();
    await t.standIn(pane, 'claude', SCREENS.claudeIdle);
    expect(await ls()).toHaveLength(1);
    t.tmux('set-option', '-p', '-t', pane, '@agent_ignore', '1');
    expect(await ls()).toEqual([]);
    expect(t.option(pane, '@agent_state')).toBe('');
    expect(t.option(pane, '@agent_ignore')).toBe('1');
  });
});

describe('a pane that dies mid-cycle', () => {
  it('costs only its own rollup write: the other scopes and the last poll time still land', async () => {
    const shell = t.start();
    const agent = t.newPane();
    await t.standIn(agent, 'claude', SCREENS.claudeIdle);
    const real = await openRunner({ kind: 'name', name: t.name }, { mode: 'spawn', bin: 'tmux' });
    // The shell pane is first in its session, so the session rollup is addressed through it; it
    // vanishes after the verdicts are written, just before the closing rollup chain.
    let killed = false;
    const runner: TmuxRunner = {
      mode: real.mode,
      run: (argv, opts) => {
        if (!killed && argv.includes('@agent_session_summary')) {
          killed = true;
          t.tmux('kill-pane', '-t', shell);
        }
        return real.run(argv, opts);
      },
      runChain: (cmds, opts) => real.runChain(cmds, opts),
      close: () => real.close(),
    };
    const manifests = loadManifestSet(readManifestFiles(bundledManifestDir()), []).manifests;
    const engine = new Engine({ runner, manifests, fold: DEFAULT_FOLD, host: 'h', readProcs: readProcesses });
    try {
      const r = await engine.cycle();
      expect(killed).toBe(true);
      expect(r.rows).toMatchObject([{ pane: agent, state: 'idle' }]);
      expect(t.tmux('list-panes', '-a', '-F', '#{pane_id}').trim()).toBe(agent);
      expect(t.tmux('show-options', '-wqv', '-t', agent, '@agent_summary').trim()).toBe('idle:1');
      expect(t.tmux('show-options', '-sqv', '@tma_last_poll').trim()).toBe(String(r.now));
    } finally {
      real.close();
    }
  });
});

describe('the set-option -F probe', () => {
  it('probes once, caches the answer on the server and leaves no probe option behind', async () => {
    const pane = t.start();
    await t.standIn(pane, 'claude', SCREENS.claudeIdle);
    expect(t.tmux('show-options', '-sqv', '@tma_setpf_ok').trim()).toBe('');
    expect(await ls()).toHaveLength(1);
    expect(t.tmux('show-options', '-sqv', '@tma_setpf_ok').trim()).toBe('1');
    expect(t.option(pane, '@__tma_probe')).toBe('');
  });

  it('a server cached as unable to expand -F gets plain writes, and each process says so once', async () => {
    const pane = t.start();
    await t.standIn(pane, 'claude', SCREENS.claudeBlocked);
    t.tmux('set-option', '-s', '@tma_setpf_ok', '0');
    const warning = 'tma: this tmux stores set-option -F formats literally; writes are unguarded\n';
    for (let i = 0; i < 2; i++) {
      await nextSecond();
      const r = await tma(['-L', t.name, '--config', config, 'ls', '--json']);
      returned();
      expect(r.code).toBe(0);
      expect(r.stderr).toBe(warning);
      expect(JSON.parse(r.stdout).agents).toMatchObject([{ pane, state: 'blocked', detail: 'permission' }]);
    }
    expect(t.option(pane, '@agent_state')).toBe('blocked');
    expect(t.tmux('show-options', '-sqv', '@tma_setpf_ok').trim()).toBe('0');
  });
});

describe('ordered-input attention clear', () => {
  it('typing into a client that shows the pane, after the episode began, clears attention; looking alone does not', async () => {
    const pane = t.start();
    const s = await t.standIn(pane, 'claude', SCREENS.claudeWorking);
    await rowOf(pane);

    // A real client attached through a pseudo-terminal; each line on its stdin is typed into it.
    // It attaches before the episode begins: tmux counts the attach itself as the client's activity.
    const script = [
      'import os, pty, sys, select',
      'pid, fd = pty.fork()',
      `if pid == 0: os.execvp('tmux', ['tmux', '-L', '${t.name}', 'attach', '-t', 'main'])`,
      'while True:',
      '    r, _, _ = select.select([fd, sys.stdin], [], [])',
      '    if fd in r:',
      '        try: os.read(fd, 65536)',
      '        except OSError: break',
      '    if sys.stdin in r:',
      '        line = sys.stdin.readline()',
      '        if not line: break',
      '        os.write(fd, line.strip().encode())',
    ].join('\n');
    const { spawn } = await import('node:child_process');
    const client = spawn('/usr/bin/python3', ['-c', script], { env: { ...process.env, TERM: 'xterm', TMUX: '' }, stdio: ['pipe', 'ignore', 'ignore'] });
    try {
      await waitFor(() => t.tmux('list-clients', '-F', '#{client_control_mode}').split('\n').includes('0'), 'client attached');
      await s.paint(SCREENS.claudeIdle);
      expect(await rowOf(pane)).toMatchObject({ state: 'idle', attention: true });
      // Attached and looking, but no input yet: the flag stays.
      expect(await rowOf(pane)).toMatchObject({ attention: true });
      // Input must come in a later wall-clock second than the episode's start.
      await new Promise((r) => setTimeout(r, 1100));
      client.stdin.write('x\n');
      await waitFor(() => s.keys().includes('x'), 'the typed key reached the pane');
      expect(await rowOf(pane)).toMatchObject({ state: 'idle', attention: false, done: false });
      expect(t.option(pane, '@agent_attention')).toBe('');
    } finally {
      client.kill();
    }
  });
});
