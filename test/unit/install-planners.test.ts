// The config editors behind install-hooks, on text only: our additions, idempotence, repointing,
// removal of only ours, and format-preserving TOML.

import { describe, expect, it } from 'vitest';
import { notifyState, planNotifyInstall, planNotifyUninstall } from '../../collector/install/codex-toml.js';
import { unifiedDiff } from '../../collector/install/diff.js';
import { parseJson, serializeJson } from '../../collector/install/json-doc.js';
import { eventStates, isOurCommand, planInstall, planUninstall } from '../../collector/install/json-hooks.js';
import { clearCommand, hookState, parseShowHooks, planHookInstall, planHookRemoval } from '../../collector/install/tmux-hooks.js';

const REF = '/opt/tma/bin/tma-hook';
const nested = { agent: 'claude', events: ['Stop', 'Notification'], ref: REF, shape: 'nested' as const };
const USER =
  '{\n  "model": "opus",\n  "10": "numeric key stays second",\n  "ratio": 1.0,\n  "hooks": {\n    "Stop": [\n      {\n' +
  '        "hooks": [\n          {\n            "type": "command",\n            "command": "say done"\n          }\n        ]\n      }\n    ]\n  }\n}\n';

describe('JSON documents', () => {
  it('keep key order, integer-like keys and number text through a round trip', () => {
    const text = '{\n  "b": 1,\n  "2": 2.50,\n  "a": [],\n  "o": {},\n  "s": "é/\\u0001"\n}\n';
    expect(serializeJson(parseJson(text))).toBe('{\n  "b": 1,\n  "2": 2.50,\n  "a": [],\n  "o": {},\n  "s": "é/\\u0001"\n}\n');
  });
  it('reject comments and trailing commas', () => {
    expect(() => parseJson('{ // x\n}')).toThrow();
    expect(() => parseJson('{"a": 1,}')).toThrow();
  });
});

describe('nested JSON hooks (claude)', () => {
  it("adds only our entries, after the user's, and a second run changes nothing", () => {
    const once = planInstall(USER, nested);
    const diff = unifiedDiff(USER, once);
    const changed = diff.split('\n').filter((l) => /^ {2}[-+]/.test(l));
    expect(changed.every((l) => l.startsWith('  +'))).toBe(true);
    expect(changed.filter((l) => l.includes('tma-hook'))).toHaveLength(2);
    expect(planInstall(once, nested)).toBe(once);
    const doc = JSON.parse(once);
    expect(Object.keys(doc)).toEqual(['10', 'model', 'ratio', 'hooks']); // JSON.parse reorders; the text does not
    expect(once.indexOf('"model"')).toBeLessThan(once.indexOf('"10"'));
    expect(once).toContain('"ratio": 1.0');
    expect(doc.hooks.Stop.map((e: { hooks: { command: string }[] }) => e.hooks[0]!.command)).toEqual(['say done', `${REF} claude Stop`]);
    expect(Object.keys(doc.hooks)).toEqual(['Stop', 'Notification']);
  });
  it('repoints a stale entry instead of adding a second, and uninstall restores the bytes', () => {
    const once = planInstall(USER, nested);
    const moved = planInstall(once, { ...nested, ref: '/new/place/tma-hook' });
    expect(moved.match(/tma-hook claude Stop/g)).toHaveLength(1);
    expect(moved).toContain('/new/place/tma-hook claude Stop');
    expect(planUninstall(moved, nested)).toBe(USER);
    expect(planUninstall(USER, nested)).toBe(USER);
  });
  it('classifies current, stale and absent events', () => {
    const once = planInstall(USER, { ...nested, events: ['Stop'] });
    const hand = once.replace(`${REF} claude Stop`, '/elsewhere/tma-hook claude Stop');
    expect([...eventStates(hand, nested)]).toEqual([
      ['Stop', 'stale'],
      ['Notification', 'absent'],
    ]);
    expect([...eventStates(once, nested)]).toEqual([
      ['Stop', 'current'],
      ['Notification', 'absent'],
    ]);
  });
  it('knows ours by the wrapper name, in any directory', () => {
    expect(isOurCommand('/a b/tma-hook claude Stop', 'claude', 'Stop')).toBe(true);
    expect(isOurCommand('tma-hook claude Stop', 'claude', 'Stop')).toBe(true);
    expect(isOurCommand('/x/other-hook claude Stop', 'claude', 'Stop')).toBe(false);
    expect(isOurCommand('/x/tma-hook claude Stop', 'claude', 'Notification')).toBe(false);
  });
  it('refuses a hooks key that is not an object', () => {
    expect(() => planInstall('{"hooks": []}', nested)).toThrow(/not an object/);
  });
});

describe('hand-formatted JSON', () => {
  const HAND =
    '{\n   "model":"opus",\n\n   "perm" : { "allow": [ "Read" ],\n         "deny":[] },\n   "hooks": {\n      "Stop": [\n         { "hooks": [ { "type": "command", "command": "say done" } ] }\n      ]\n   }\n}';
  it("keeps every byte of the user's but the commas that join our entries on, and indents ours like its neighbours", () => {
    const once = planInstall(HAND, nested);
    const stop =
      '         {\n            "hooks": [\n               {\n                  "type": "command",\n                  "command": "/opt/tma/bin/tma-hook claude Stop"\n               }\n            ]\n         }';
    const user = HAND.slice(0, HAND.indexOf('"say done" } ] }') + 16);
    expect(once.startsWith(`${user},\n${stop}\n      ],\n      "Notification": [\n         {\n`)).toBe(true);
    expect(once.endsWith('\n      ]\n   }\n}')).toBe(true);
    expect(planUninstall(once, nested)).toBe(HAND);
  });
  it('adds to a one-line object on its line, and to an empty one one level in', () => {
    expect(planInstall('{"a":1}', { ...nested, events: ['Stop'] })).toBe(
      `{"a":1,"hooks":{"Stop": [{"hooks": [{"type": "command", "command": "${REF} claude Stop"}]}]}}`,
    );
    const empty = planInstall('{\n\t"hooks": {}\n}\n', { ...nested, events: ['Stop'] });
    expect(empty.startsWith('{\n\t"hooks": {\n\t\t"Stop": [\n\t\t\t{\n')).toBe(true);
  });
});

describe('flat JSON hooks (cursor)', () => {
  const flat = { agent: 'cursor', events: ['stop'], ref: REF, shape: 'flat' as const };
  it('adds version before hooks, and removes both again', () => {
    const user = '{\n  "theme": "dark"\n}\n';
    const once = planInstall(user, flat);
    expect(Object.keys(JSON.parse(once))).toEqual(['theme', 'version', 'hooks']);
    expect(JSON.parse(once).hooks.stop).toEqual([{ command: `${REF} cursor stop` }]);
    expect(planUninstall(once, flat)).toBe(user);
  });
});

describe('Codex config.toml', () => {
  const TOML = '# my settings\nmodel = "o3" # fast one\n\n# profiles follow\n[profiles.work]\nmodel = "gpt"\n';
  it('inserts notify among the root keys, keeps comments, and uninstall restores the bytes', () => {
    const once = planNotifyInstall(TOML, REF);
    expect(once).toBe(`# my settings\nmodel = "o3" # fast one\nnotify = ["${REF}", "codex", "notify"]\n\n# profiles follow\n[profiles.work]\nmodel = "gpt"\n`);
    expect(planNotifyInstall(once, REF)).toBe(once);
    expect(notifyState(once, REF)).toBe('current');
    expect(planNotifyUninstall(once)).toBe(TOML);
  });
  it('repoints our multi-line notify in place and refuses a foreign one', () => {
    const ours = `a = 1\nnotify = [\n  "/old/tma-hook",\n  "codex",\n  "notify",\n]\nb = 2\n`;
    expect(notifyState(ours, REF)).toBe('stale');
    expect(planNotifyInstall(ours, REF)).toBe(`a = 1\nnotify = ["${REF}", "codex", "notify"]\nb = 2\n`);
    const foreign = 'notify = ["notify-send", "codex"]\n';
    expect(() => planNotifyInstall(foreign, REF)).toThrow(/only one/);
    expect(planNotifyUninstall(foreign)).toBe(foreign);
  });
  it('puts notify above a table that opens the file, and into an empty file', () => {
    expect(planNotifyInstall('# t\n[a]\nx = 1\n', REF)).toBe(`notify = ["${REF}", "codex", "notify"]\n# t\n[a]\nx = 1\n`);
    expect(planNotifyInstall('', REF)).toBe(`notify = ["${REF}", "codex", "notify"]\n`);
    expect(() => planNotifyInstall('model = \n', REF)).toThrow(/cannot parse/);
  });
});

describe('tmux attention hooks', () => {
  const wanted = clearCommand('after-select-pane', '/opt/tma/bin/tma.js');
  it('appends when absent, repoints ours in place, and leaves others alone', () => {
    expect(planHookInstall('after-select-pane', [], wanted)).toEqual(['set-hook', '-ga', 'after-select-pane', wanted]);
    const shown = parseShowHooks(`after-select-pane[0] display hi\nafter-select-pane[3] run-shell "'/old/tma' clear-attention x"\n`, 'after-select-pane');
    expect(planHookInstall('after-select-pane', shown, wanted)).toEqual(['set-hook', '-g', 'after-select-pane[3]', wanted]);
    expect(planHookRemoval('after-select-pane', shown, null)).toEqual([['set-hook', '-gu', 'after-select-pane[3]']]);
    expect(parseShowHooks('session-window-changed\n', 'session-window-changed')).toEqual([]);
  });
  it('tells present, drifted, wiped and missing apart', () => {
    const q = wanted.replace(/"/g, '\\"');
    expect(hookState([{ index: 1, command: q }], wanted, 1)).toBe('present');
    expect(hookState([{ index: 1, command: 'run-shell "x clear-attention"' }], wanted, null)).toBe('drifted');
    expect(hookState([], wanted, 0)).toBe('wiped');
    expect(hookState([], wanted, null)).toBe('missing');
  });
});

describe('key bindings in tmux.conf', () => {
  it('adds one marked source line, replaces older ones, and removes only it', async () => {
    const { planConfAdd, planConfRemove, sourceLine, confLineProblems } = await import('../../collector/install/keys.js');
    const conf = 'set -g mouse on\n# my keys\nbind r source-file ~/.tmux.conf\n';
    const line = sourceLine(null);
    const once = planConfAdd(conf, line);
    expect(once).toBe(`${conf}${line}\n`);
    expect(planConfAdd(once, line)).toBe(once);
    expect(planConfRemove(once)).toBe(conf);
    const pinned = sourceLine('/x/tma/tmux.conf');
    expect(planConfAdd(once, pinned)).toBe(`${conf}${pinned}\n`);
    expect(confLineProblems(once, pinned, 'c')).toEqual([`c sources a different tma key file: ${line}`]);
    expect(confLineProblems(conf, line, 'c')[0]).toMatch(/does not source/);
  });
});

describe('status-line context shim', () => {
  it("wraps the user's command, re-wraps idempotently, and unwraps to the original bytes", async () => {
    const { planShimInstall, planShimRemove, shimState } = await import('../../collector/install/statusline.js');
    const user = '{\n  "statusLine": {\n    "type": "command",\n    "command": "~/bin/my-line",\n    "padding": 0\n  }\n}\n';
    const once = planShimInstall(user, 'claude', '/opt/tma/bin/tma.js');
    const cmd = JSON.parse(once).statusLine.command as string;
    expect(cmd).toContain("_TMA_BIN='/opt/tma/bin/tma.js'");
    expect(cmd).toContain('event --agent claude --kind context');
    expect(cmd.endsWith(` & printf '%s' "$_TMA_SL" | ~/bin/my-line`)).toBe(true);
    expect(JSON.parse(once).statusLine.padding).toBe(0);
    expect(planShimInstall(once, 'claude', '/opt/tma/bin/tma.js')).toBe(once);
    expect(shimState(once, 'claude', '/opt/tma/bin/tma.js')).toBe('wired');
    expect(shimState(once, 'claude', '/elsewhere/tma')).toBe('stale');
    expect(shimState(user, 'claude', '/opt/tma/bin/tma.js')).toBe('foreign');
    expect(planShimRemove(once, 'claude')).toBe(user);
    const bare = '{\n  "model": "x"\n}\n';
    expect(planShimRemove(planShimInstall(bare, 'claude', '/b/tma'), 'claude')).toBe(bare);
  });
});
