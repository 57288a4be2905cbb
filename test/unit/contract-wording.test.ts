// The reference's exact words and looks that users script against: [status] styles, refusals
// of bad agent tokens in action manifests, and the error texts that name what is wrong.

import { describe, expect, it } from 'vitest';
import { parseActionManifest } from '../../collector/core/action-manifest.js';
import { ConfigError, parseConfig } from '../../collector/config/config-schema.js';
import { ManifestError, parseAgentManifest } from '../../collector/core/manifest-load.js';
import { goalText } from '../../shared/wait.js';
import { countRows, statusPlain, statusTmux } from '../../shared/status-format.js';

function refusal(fn: () => unknown): Error {
  try {
    fn();
  } catch (e) {
    return e as Error;
  }
  throw new Error('accepted but should have been refused');
}

const counts = countRows([
  { pane: '%1', agent: 'claude', state: 'blocked', attention: false, since_ms: 1 },
  { pane: '%2', agent: 'claude', state: 'idle', attention: false, since_ms: 1 },
]);

describe('[status] styles', () => {
  it('a glyph and colour override change the tmux and plain formats; the rest keep their defaults', () => {
    const c = parseConfig('/c.toml', '[status]\nblocked = { glyph = "B", color = "colour196" }\nidle = { glyph = "I" }\n');
    expect(c.status).toEqual({ blocked: { glyph: 'B', color: 'colour196' }, idle: { glyph: 'I' } });
    expect(statusTmux(counts, c.status)).toBe(
      '#[range=user|tma:blocked]#[fg=colour196]B1#[norange]#[default] #[range=user|tma:idle]#[fg=colour22]I1#[norange]#[default]',
    );
    expect(statusPlain(counts, c.status)).toBe('B1 I1\n');
  });
  it('an unknown key under [status] is an error naming it', () => {
    expect(() => parseConfig('/c.toml', '[status]\nblockd = { glyph = "B" }\n')).toThrow(new ConfigError('/c.toml: status.blockd: unknown key'));
    expect(() => parseConfig('/c.toml', '[status]\nblocked = { glyph = "B", colour = "red" }\n')).toThrow(/status\.blocked\.colour: unknown key/);
  });
  it('a colour that could break out of the style is refused; a # in a glyph is escaped', () => {
    expect(() => parseConfig('/c.toml', '[status]\nblocked = { color = "red]#[bg=blue" }\n')).toThrow(/status\.blocked\.color/);
    expect(statusTmux(counts, { blocked: { glyph: '#' } })).toContain(']##1#[norange]');
  });
});

describe('status in a default tmux theme', () => {
  it("every fragment ends with #[default], and no default colour is the bar's own green", () => {
    const all = countRows(
      (['blocked', 'working', 'idle', 'unknown'] as const).map((state, i) => ({
        pane: `%${i}`,
        agent: 'claude',
        state,
        attention: false,
        since_ms: 1,
      })),
    );
    const parts = statusTmux(all).split(' ');
    expect(parts).toHaveLength(4);
    for (const p of parts) {
      expect(p.endsWith('#[norange]#[default]')).toBe(true);
      expect(p).not.toMatch(/fg=(green|yellow|colour2|colour10|colour244)\]/);
    }
  });
  it('plain ends with a newline', () => {
    expect(statusPlain(counts).endsWith('\n')).toBe(true);
  });
});

const KEYS_ACTION = (table: string) => `min_engine_version = "0.4.0"\nname = "poke"\nlabel = "Poke"\nkind = "keys"\n${table}`;
const action = (text: string) => () => parseActionManifest({ path: '/u/actions/poke.toml', text });

describe('action manifests refuse bad agent tokens', () => {
  it('in [keys]', () => {
    const e = refusal(action(KEYS_ACTION('[keys]\n"cla ude" = ["1"]\n')));
    expect(e).toBeInstanceOf(ManifestError);
    expect(e.message).toMatch(/keys.*bad agent token/);
  });
  it('in [api]', () => {
    const e = refusal(action(KEYS_ACTION('[api]\n"open,code" = { op = "permission-reply", reply = "once" }\n')));
    expect(e).toBeInstanceOf(ManifestError);
    expect(e.message).toMatch(/api.*bad agent token/);
  });
  it('an unknown requires token is named', () => {
    const e = refusal(action(KEYS_ACTION('requires = ["session", "tty"]\n[keys]\nclaude = ["1"]\n')));
    expect(e.message).toContain('unknown requires token "tty"');
  });
});

describe('error texts name the offending thing', () => {
  const agent = (extra: string) => () =>
    parseAgentManifest(
      { path: '/x/agents/foo.toml', text: `min_engine_version = "0.4.0"\n[identity]\nprocess_names = ["foo"]\n[capture]\n${extra}` },
      { bundled: false },
    );
  it('unknown region', () => {
    expect(refusal(agent('[[rules]]\nstate = "idle"\nregion = "bottom"\nmatch = { contains = "x" }\n')).message).toContain('unknown region "bottom"');
  });
  it('unknown telemetry channel', () => {
    expect(refusal(agent('[telemetry.context]\nchannel = "socket"\nformat = "f"\n')).message).toContain('unknown telemetry channel "socket"');
  });
  it('unknown notify trigger', () => {
    expect(refusal(() => parseConfig('/c.toml', '[notify]\non = ["blocked", "finished"]\n')).message).toContain('unknown notify trigger "finished"');
  });
  it('the legacy [agents] table reports its rename', () => {
    expect(refusal(() => parseConfig('/c.toml', '[agents]\nclaude = true\n')).message).toMatch(/\[agents\] table was renamed to \[\[agent\]\]/);
  });
  it('wait names its goal with a comma and a space', () => {
    expect(goalText({ until: ['idle', 'blocked'], since: 1700000000000 })).toBe('idle, blocked since 1700000000000');
  });
});
