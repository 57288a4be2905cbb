// install-keys' reading of the person's own bindings and the plan around them (pure).

import { describe, expect, test } from 'vitest';
import { confBindings, DEFAULT_KEYS, keyMapOf, parseBind, planKeys, renderManaged, serverBindings } from '../../collector/install/keys.js';

describe('parseBind', () => {
  test('tables, flags with arguments, escaped and quoted keys', () => {
    expect(parseBind('bind h select-pane -L')).toEqual({ table: 'prefix', key: 'h', command: 'select-pane -L' });
    expect(parseBind('bind-key -r -T prefix j select-pane -D')).toEqual({ table: 'prefix', key: 'j', command: 'select-pane -D' });
    expect(parseBind('bind -n M-h select-pane -L')?.table).toBe('root');
    expect(parseBind('bind-key -T copy-mode-vi v send -X begin-selection')?.table).toBe('copy-mode-vi');
    expect(parseBind('bind-key    -T prefix \\# list-buffers')?.key).toBe('#');
    expect(parseBind("bind 'a' x")?.key).toBe('a');
    expect(parseBind('set -g mouse on')).toBeNull();
  });
});

describe('planKeys', () => {
  test('a taken key is left to its owner and a free alternative offered; nothing else moves', () => {
    const taken = confBindings('bind h select-pane -L\nbind -n j x\n# bind g no\n', '/c');
    expect(taken.map((t) => t.key)).toEqual(['h']);
    const plan = planKeys(DEFAULT_KEYS, taken);
    expect(plan.keys).toEqual({ ...DEFAULT_KEYS, home: null });
    expect(plan.conflicts).toEqual([{ binding: 'home', taken: { key: 'h', command: 'select-pane -L', where: '/c line 1' }, offer: 'H' }]);
  });

  test("an offer skips keys that are taken or tma's own", () => {
    const plan = planKeys(DEFAULT_KEYS, [{ key: 'a', command: 'x', where: 'w' }]);
    // 'A' is the act menu's: the picker is offered M-a.
    expect(plan.conflicts[0]?.offer).toBe('M-a');
  });

  test("tma's own keys on the server are not the person's", () => {
    const listed =
      "bind-key -T prefix j run-shell \"'/opt/tma/bin/tma.js' -S '#{socket_path}' jump --attention\"\nbind-key -T prefix h select-pane -L\nbind-key -T root x y";
    expect(serverBindings(listed, '/opt/tma/bin/tma.js').map((t) => t.key)).toEqual(['h']);
  });
});

test('a managed file records its key map, so --check compares against the same choice', () => {
  const keys = { ...DEFAULT_KEYS, home: 'H', attention: null };
  const text = renderManaged('/b/tma', false, keys);
  expect(keyMapOf(text)).toEqual(keys);
  expect(text).toContain('# prefix key for attention left unbound');
  expect(text).not.toMatch(/jump --attention/);
  expect(keyMapOf('# old file\nbind-key a x\n')).toBeNull();
});
