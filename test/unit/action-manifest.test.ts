// Action manifests: the bundled four, every schema rule, and the all-or-nothing set.

import { describe, expect, it } from 'vitest';
import { actionAgents, loadActionSet, parseActionManifest, type ActionManifest } from '../../collector/core/action-manifest.js';
import { ManifestError } from '../../collector/core/manifest-load.js';
import type { ManifestFile } from '../../collector/core/types.js';
import { bundledActionDir, readManifestFiles } from '../../collector/manifest-files.js';

const KEYS = `min_engine_version = "0.4.0"
name = "poke"
label = "Poke"
kind = "keys"
`;
const EXEC = `min_engine_version = "0.4.0"
name = "poke"
label = "Poke"
kind = "exec"
command = "echo hi"
`;

const file = (text: string, path = '/u/actions/poke.toml'): ManifestFile => ({ path, text });
const parse = (text: string, path?: string): ActionManifest => parseActionManifest(file(text, path));

function failure(text: string, path?: string): ManifestError {
  try {
    parse(text, path);
  } catch (e) {
    if (e instanceof ManifestError) return e;
    throw e;
  }
  throw new Error('action loaded but should have been refused');
}

const bundled = readManifestFiles(bundledActionDir());

describe('bundled actions', () => {
  const set = loadActionSet(bundled, []);
  if (!set.ok) throw new Error(JSON.stringify(set.issues));
  const get = (name: string) => {
    const a = set.actions.find((x) => x.name === name);
    if (!a || a.kind !== 'keys') throw new Error(`no keys action ${name}`);
    return a;
  };

  it('load in order approve, deny, interrupt, compact; none confirms', () => {
    expect(set.actions.map((a) => a.name)).toEqual(['approve', 'deny', 'interrupt', 'compact']);
    for (const a of set.actions) {
      expect(a.confirm).toBe(false);
      expect(a.bundled).toBe(true);
      expect(a.timeoutMs).toBe(30_000);
      expect(a.detachTimeoutMs).toBe(900_000);
    }
  });

  it('approve', () => {
    const a = get('approve');
    expect(a.when).toEqual({
      state: ['blocked'],
      detail: ['permission', 'auto-mode-offer', 'auto-mode-check', 'permission-cursor-no', 'permission-cursor-yes'],
      contextPctMin: null,
      contextPctMax: null,
    });
    // Claude Code 2.1.332's dialogs that take no digit, each with the keys tried on it live.
    expect(a.dialogKeys).toEqual({
      claude: { 'auto-mode-offer': ['Enter'], 'auto-mode-check': ['Enter'], 'permission-cursor-no': ['Down', 'Enter'], 'permission-cursor-yes': ['Enter'] },
    });
    // Codex's "y" picks "Yes, proceed" wherever its cursor is; OpenCode's Enter only while its
    // dialog highlights "Allow once".
    expect(a.keys).toEqual({ claude: ['1'], codex: ['y'], gemini: ['1'], opencode: ['Enter'] });
    expect(a.api).toEqual({ opencode: { op: 'permission-reply', reply: 'once' } });
    expect(a.kind === 'keys' && a.cursor).toEqual({ opencode: 'Allow once' });
    expect(actionAgents(a)).toEqual(['claude', 'codex', 'gemini', 'opencode']);
  });

  it('deny', () => {
    const a = get('deny');
    expect(a.when).toEqual({
      state: ['blocked'],
      detail: ['permission', 'auto-mode-offer', 'auto-mode-check', 'permission-cursor-no', 'permission-cursor-yes'],
      contextPctMin: null,
      contextPctMax: null,
    });
    expect(a.dialogKeys).toEqual({
      claude: { 'auto-mode-offer': ['Escape'], 'auto-mode-check': ['Escape'], 'permission-cursor-no': ['Escape'], 'permission-cursor-yes': ['Escape'] },
    });
    expect(a.keys).toEqual({ claude: ['Escape'], codex: ['Escape'], gemini: ['Escape'], opencode: ['Escape'] });
    expect(a.api).toEqual({ opencode: { op: 'permission-reply', reply: 'reject' } });
  });

  it('interrupt', () => {
    const a = get('interrupt');
    expect(a.when).toEqual({ state: ['working'], detail: [], contextPctMin: null, contextPctMax: null });
    expect(a.keys).toEqual({ claude: ['Escape'], codex: ['Escape'], gemini: ['Escape'] });
    expect(a.api).toEqual({});
  });

  it('compact', () => {
    const a = get('compact');
    expect(a.when).toEqual({ state: ['idle'], detail: [], contextPctMin: 75, contextPctMax: null });
    expect(a.keys).toEqual({ claude: ['/compact', 'Enter'] });
  });

  it('no bundled action covers cursor or pi', () => {
    for (const a of set.actions) expect(actionAgents(a).filter((n) => n === 'cursor' || n === 'pi')).toEqual([]);
  });
});

describe('valid shapes', () => {
  it('a keys action with defaults', () => {
    const a = parse(`${KEYS}[keys]\nclaude = ["x"]\n`);
    expect(a).toMatchObject({ name: 'poke', label: 'Poke', kind: 'keys', when: null, requires: [], confirm: false, bundled: false });
  });

  it('an agent in both [keys] and [api] (the API when it can be used, else the keys)', () => {
    const a = parse(`${KEYS}[keys]\nopencode = ["y"]\n[api]\nopencode = { op = "permission-reply", reply = "once" }\n`);
    if (a.kind !== 'keys') throw new Error('not a keys action');
    expect(a.keys).toEqual({ opencode: ['y'] });
    expect(a.api).toEqual({ opencode: { op: 'permission-reply', reply: 'once' } });
  });

  it('an exec action with everything set', () => {
    const a = parse(
      `${EXEC}agents = ["claude"]\nrequires = ["session", "cwd", "pid", "title"]\nconfirm = true\ndetach = true\ntimeout_ms = 1\ndetach_timeout_ms = 5\n`,
    );
    expect(a).toMatchObject({
      kind: 'exec',
      command: 'echo hi',
      agents: ['claude'],
      requires: ['session', 'cwd', 'pid', 'title'],
      confirm: true,
      detach: true,
      timeoutMs: 1,
      detachTimeoutMs: 5,
    });
  });

  it('an exec action without agents applies to all', () => {
    const a = parse(EXEC);
    expect(a.kind === 'exec' && a.agents).toEqual([]);
    expect(a.kind === 'exec' && a.detach).toBe(false);
  });
});

describe('refusals', () => {
  it.each([
    ['name differs from the stem', `${KEYS.replace('"poke"', '"prod"')}[keys]\nclaude = ["x"]\n`, 'name', /must equal the file name stem "poke"/],
    ['name is not a safe token', `${KEYS.replace('"poke"', '"Poke"')}[keys]\nclaude = ["x"]\n`, 'name', /token/],
    ['missing label', `${KEYS.replace('label = "Poke"\n', '')}[keys]\nclaude = ["x"]\n`, 'label', /missing/],
    ['unknown kind', `${KEYS.replace('"keys"', '"shell"')}[keys]\nclaude = ["x"]\n`, 'kind', /.+/],
    ['keys action with no transport', KEYS, 'keys', /at least one agent/],
    ['keys action with empty tables', `${KEYS}[keys]\n[api]\n`, 'keys', /at least one agent/],
    ['empty key list', `${KEYS}[keys]\nclaude = []\n`, 'keys.claude', /.+/],
    ['agents on a keys action', `${KEYS}agents = ["claude"]\n[keys]\nclaude = ["x"]\n`, 'agents', /keys action/],
    ['detach on a keys action', `${KEYS}detach = false\n[keys]\nclaude = ["x"]\n`, 'detach', /keys action/],
    ['command on a keys action', `${KEYS}command = "ls"\n[keys]\nclaude = ["x"]\n`, 'command', /keys action/],
    ['exec without command', EXEC.replace('command = "echo hi"\n', ''), 'command', /needs a command/],
    ['exec with [keys]', `${EXEC}[keys]\nclaude = ["x"]\n`, 'keys', /exec action/],
    ['exec with [api]', `${EXEC}[api]\nopencode = { op = "permission-reply", reply = "once" }\n`, 'api', /exec action/],
    ['api op outside the closed set', `${KEYS}[api]\nopencode = { op = "reply", reply = "once" }\n`, 'api.opencode.op', /.+/],
    ['api reply outside the closed set', `${KEYS}[api]\nopencode = { op = "permission-reply", reply = "yes" }\n`, 'api.opencode.reply', /.+/],
    ['bad when.detail token', `${EXEC}[when]\ndetail = ["Permission"]\n`, 'when.detail[0]', /detail token/],
    ['when.state outside the states', `${EXEC}[when]\nstate = ["done"]\n`, 'when.state[0]', /.+/],
    ['unknown requirement', `${EXEC}requires = ["tty"]\n`, 'requires[0]', /.+/],
    ['timeout_ms of 0', `${EXEC}timeout_ms = 0\n`, 'timeout_ms', /.+/],
    ['detach_timeout_ms of 0', `${EXEC}detach_timeout_ms = 0\n`, 'detach_timeout_ms', /.+/],
    ['unknown top-level key', `${EXEC}confrim = true\n`, 'confrim', /unknown key/],
    ['unknown key in [when]', `${EXEC}[when]\nstates = ["idle"]\n`, 'when.states', /unknown key/],
    ['cursor for an agent without keys', `${KEYS}[keys]\nclaude = ["x"]\n[cursor]\nopencode = "Allow once"\n`, 'cursor.opencode', /no \[keys\]/],
    ['empty cursor option', `${KEYS}[keys]\nclaude = ["x"]\n[cursor]\nclaude = " "\n`, 'cursor.claude', /.+/],
    ['exec with [cursor]', `${EXEC}[cursor]\nclaude = "Yes"\n`, 'cursor', /exec action/],
    ['dialog keys for an agent without keys', `${KEYS}[keys]\nclaude = ["x"]\n[dialog_keys.codex]\nq = ["y"]\n`, 'dialog_keys.codex', /no \[keys\]/],
    [
      'dialog keys for a detail the gate refuses',
      `${KEYS}[when]\ndetail = ["permission"]\n[keys]\nclaude = ["x"]\n[dialog_keys.claude]\nquestion = ["Enter"]\n`,
      'dialog_keys.claude.question',
      /not in when\.detail/,
    ],
    ['empty dialog key list', `${KEYS}[keys]\nclaude = ["x"]\n[dialog_keys.claude]\nq = []\n`, 'dialog_keys.claude.q', /.+/],
    ['bad dialog detail token', `${KEYS}[keys]\nclaude = ["x"]\n[dialog_keys.claude]\nQ = ["y"]\n`, 'dialog_keys.claude.Q', /.+/],
    ['exec with [dialog_keys]', `${EXEC}[dialog_keys.claude]\nq = ["y"]\n`, 'dialog_keys', /exec action/],
    ['unknown key in an api entry', `${KEYS}[api]\nopencode = { op = "permission-reply", reply = "once", x = 1 }\n`, 'api.opencode.x', /unknown key/],
  ])('%s', (_what, text, key, problem) => {
    const e = failure(text);
    expect(e.file).toBe('/u/actions/poke.toml');
    expect(e.key).toBe(key);
    expect(e.problem.startsWith(`${key}: `)).toBe(true);
    expect(e.problem).toMatch(problem);
    expect(e.message).toBe(`/u/actions/poke.toml: ${e.problem}`);
  });

  it('context bounds are 0..=100', () => {
    for (const ok of [0, 1, 99, 100]) {
      expect(parse(`${EXEC}[when]\ncontext_pct_min = ${ok}\ncontext_pct_max = ${ok}\n`).when).toMatchObject({
        contextPctMin: ok,
        contextPctMax: ok,
      });
    }
    expect(failure(`${EXEC}[when]\ncontext_pct_min = -1\n`).key).toBe('when.context_pct_min');
    expect(failure(`${EXEC}[when]\ncontext_pct_max = 101\n`).key).toBe('when.context_pct_max');
    expect(failure(`${EXEC}[when]\ncontext_pct_min = 50.5\n`).key).toBe('when.context_pct_min');
  });

  it('context min may equal max but not exceed it', () => {
    expect(parse(`${EXEC}[when]\ncontext_pct_min = 50\ncontext_pct_max = 51\n`).when?.contextPctMin).toBe(50);
    expect(parse(`${EXEC}[when]\ncontext_pct_min = 50\ncontext_pct_max = 50\n`).when?.contextPctMax).toBe(50);
    const e = failure(`${EXEC}[when]\ncontext_pct_min = 51\ncontext_pct_max = 50\n`);
    expect(e.key).toBe('when.context_pct_min');
    expect(e.problem).toMatch(/greater than context_pct_max/);
  });

  it('a too-new action says upgrade, even with keys this engine does not know', () => {
    const e = failure(`min_engine_version = "0.5"\nname = "poke"\nfuture = 1\n`);
    expect(e.key).toBe('min_engine_version');
    expect(e.problem).toMatch(/requires engine 0\.5, this is 0\.4\.4: upgrade/);
  });

  it('the newest version it accepts is the engine version', () => {
    expect(parse(EXEC.replace('"0.4.0"', '"0.4.4"')).minEngineVersion).toBe('0.4.4');
    expect(failure(EXEC.replace('"0.4.0"', '"0.4.5"')).key).toBe('min_engine_version');
  });
});

describe('loadActionSet', () => {
  const user = (name: string, label: string): ManifestFile => ({
    path: `/u/actions/${name}.toml`,
    text: `min_engine_version = "0.4.0"\nname = "${name}"\nlabel = "${label}"\nkind = "exec"\ncommand = "true"\n`,
  });

  it('orders bundled actions fixed, whatever the input order', () => {
    const set = loadActionSet([...bundled].reverse(), []);
    expect(set.ok && set.actions.map((a) => a.name)).toEqual(['approve', 'deny', 'interrupt', 'compact']);
  });

  it('a user file replaces a bundled one in place; new ones follow by file name', () => {
    const set = loadActionSet(bundled, [user('zz', 'Z'), user('deny', 'My deny'), user('aa', 'A')]);
    if (!set.ok) throw new Error('set failed');
    expect(set.actions.map((a) => a.name)).toEqual(['approve', 'deny', 'interrupt', 'compact', 'aa', 'zz']);
    expect(set.actions[1]).toMatchObject({ label: 'My deny', kind: 'exec', bundled: false });
  });

  it('one broken user file fails the whole set, listing every broken file', () => {
    const broken1 = { path: '/u/actions/bad.toml', text: 'x =' };
    const broken2 = { path: '/u/actions/worse.toml', text: user('other', 'O').text };
    const set = loadActionSet(bundled, [user('fine', 'F'), broken2, broken1]);
    expect(set.ok).toBe(false);
    if (set.ok) return;
    expect(set.issues.map((i) => i.file)).toEqual(['/u/actions/bad.toml', '/u/actions/worse.toml']);
    expect(set.issues[1]?.problem).toMatch(/^name: /);
  });

  it('a broken bundled file throws', () => {
    expect(() => loadActionSet([{ path: '/b/approve.toml', text: 'nope' }], [])).toThrow(ManifestError);
  });
});
