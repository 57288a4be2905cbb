import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../collector/config/config-schema.js';

describe('config.toml', () => {
  it('defaults when empty, seconds become ms', () => {
    const c = parseConfig('/c.toml', '');
    expect(c.fold).toEqual({ freshnessMs: 3000, dwellMs: 3000, hookDecayMs: 60_000, blockedDecayMs: 300_000 });
    const d = parseConfig('/c.toml', '[fold]\nfreshness_secs = 0\nhook_decay_secs = 90\n');
    expect(d.fold.freshnessMs).toBe(0);
    expect(d.fold.hookDecayMs).toBe(90_000);
  });

  it('an old [agents.<name>] api_base is sent to [api.<name>], and following the advice loads', () => {
    const url = 'http://127.0.0.1:4096';
    const refusal = (text: string) => {
      try {
        parseConfig('/c.toml', text);
      } catch (e) {
        if (e instanceof ConfigError) return e.message;
      }
      throw new Error('config loaded but should have been refused');
    };
    const msg = refusal(`[agents.opencode]\napi_base = "${url}"\n`);
    expect(msg).toBe('/c.toml: agents: move agents.opencode.api_base to [api.opencode] api_base');
    expect(parseConfig('/c.toml', `[api.opencode]\napi_base = "${url}"\n`).apiBase).toEqual({ opencode: url });
    // The advice it used to give fails in turn: [[agent]] takes no api_base.
    expect(() => parseConfig('/c.toml', `[[agent]]\nname = "opencode"\napi_base = "${url}"\n`)).toThrow(ConfigError);
    // Other keys of an old table still go to [[agent]].
    expect(refusal(`[agents.opencode]\napi_base = "${url}"\nenabled = false\n`)).toMatch(
      /move agents\.opencode\.api_base to \[api\.opencode\] api_base; the \[agents\] table was renamed to \[\[agent\]\]/,
    );
  });

  it('reads [[agent]] entries and the remote allow list', () => {
    const c = parseConfig(
      '/c.toml',
      '[[agent]]\nname = "pi"\nenabled = false\n[[agent]]\nname = "claude"\nprocess_names = ["claude-dev"]\n[remote]\nallow_actions = ["approve"]\n',
    );
    expect(c.agents).toEqual([
      { name: 'pi', enabled: false },
      { name: 'claude', process_names: ['claude-dev'] },
    ]);
    expect(c.remote).toEqual({ allowActions: ['approve'], allowExec: false, sharePrompt: null });
  });

  it('an unknown key anywhere is an error naming the file and the key', () => {
    expect(() => parseConfig('/c.toml', 'colour = 1\n')).toThrow(new ConfigError('/c.toml: colour: unknown key'));
    expect(() => parseConfig('/c.toml', '[fold]\ndwel_secs = 1\n')).toThrow(new ConfigError('/c.toml: fold.dwel_secs: unknown key'));
    expect(() => parseConfig('/c.toml', '[[agent]]\nname = "x"\nenable = true\n')).toThrow(/agent\[0\]\.enable: unknown key/);
  });

  it('a wrong type names the key; bad TOML names the file', () => {
    expect(() => parseConfig('/c.toml', '[fold]\ndwell_secs = "3"\n')).toThrow(/\/c\.toml: fold\.dwell_secs: /);
    expect(() => parseConfig('/c.toml', '[fold\n')).toThrow(/\/c\.toml: not valid TOML/);
  });
});
