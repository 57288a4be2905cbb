// Strict parsing of agent manifests: every refusal names the file and the key at fault.

import { describe, expect, it } from 'vitest';
import { ManifestError, parseAgentManifest } from '../../collector/core/manifest-load.js';
import { ENGINE_VERSION } from '../../collector/core/version.js';

const PATH = '/x/agents/foo.toml';

const BASE = `
min_engine_version = "0.4.0"
[identity]
process_names = ["foo"]
[capture]
`;

function parse(text: string) {
  return parseAgentManifest({ path: PATH, text }, { bundled: false });
}

/** The ManifestError a manifest text raises (fails the test if it loads). */
function failure(text: string): ManifestError {
  try {
    parse(text);
  } catch (e) {
    if (e instanceof ManifestError) return e;
    throw e;
  }
  throw new Error('manifest loaded but should have been refused');
}

function rule(body: string): string {
  return `${BASE}\n[[rules]]\n${body}\n`;
}

function hook(claim: string, extra = ''): string {
  return `${BASE}\n[hooks]\n[[hooks.map]]\nevent = "E"\nclaim = ${claim}\n${extra}\n`;
}

describe('a minimal manifest', () => {
  it('loads with defaults', () => {
    const m = parse(BASE);
    expect(m.name).toBe('foo');
    expect(m.path).toBe(PATH);
    expect(m.bundled).toBe(false);
    expect(m.identity).toEqual({ processNames: ['foo'], titlePatterns: [] });
    expect(m.hooks).toBeNull();
    expect(m.capture.visible).toEqual([]);
    expect(m.rules).toEqual([]);
    expect(m.details).toEqual({});
    expect(m.telemetry.context).toBeNull();
  });

  it('fills rule defaults and keeps hook matchers uncompiled', () => {
    const m = parse(
      `${BASE}
[hooks]
covers = ["idle"]
[[hooks.map]]
event = "E"
matcher = "(unclosed"
claim = { state = "idle" }
[[rules]]
state = "working"
region = "visible"
match = { contains = "busy" }
`,
    );
    expect(m.rules[0]).toMatchObject({ index: 0, priority: 0, detail: null, skipStateUpdate: false });
    expect(m.hooks?.map[0]).toEqual({
      event: 'E',
      matcher: '(unclosed',
      claim: { kind: 'state', state: 'idle', detail: null },
      turnEnd: false,
    });
  });

  it('requires min_engine_version, [identity] and [capture]', () => {
    expect(failure(BASE.replace('min_engine_version = "0.4.0"', '')).message).toBe(`${PATH}: min_engine_version: missing required key`);
    expect(failure(BASE.replace('[identity]\nprocess_names = ["foo"]', '')).key).toBe('identity');
    expect(failure(BASE.replace('[capture]', '')).key).toBe('capture');
  });

  it('requires identity.process_names and says what it is for', () => {
    const e = failure(BASE.replace('process_names = ["foo"]', 'title_patterns = ["^foo"]'));
    expect(e.key).toBe('identity.process_names');
    expect(e.message).toMatch(/^\/x\/agents\/foo\.toml: identity\.process_names: missing required key: .*can never match a pane/);
  });
});

describe('unknown keys', () => {
  it.each([
    ['top level', `bogus = 1\n${BASE}`, 'bogus'],
    ['identity', BASE.replace('process_names', 'proces_names'), 'identity.proces_names'],
    ['capture', `${BASE}visibel = []\n`, 'capture.visibel'],
    ['a rule', rule('state = "idle"\nregion = "title"\nmatch = { contains = "x" }\nprio = 3'), 'rules[0].prio'],
    ['a match', rule('state = "idle"\nregion = "title"\nmatch = { contain = "x" }'), 'rules[0].match.contain'],
    [
      'a nested match',
      rule('state = "idle"\nregion = "title"\nmatch = { any = [{ contains = "a" }, { not = { regexp = "b" } }] }'),
      'rules[0].match.any[1].not.regexp',
    ],
    ['a claim', hook('{ state = "idle", detial = "x" }'), 'hooks.map[0].claim.detial'],
    ['a hook entry', hook('{ state = "idle" }', 'turnend = true'), 'hooks.map[0].turnend'],
    ['[hooks]', `${BASE}\n[hooks]\ncover = []\n`, 'hooks.cover'],
    ['a detail', `${BASE}\n[details]\nfoo = { alias = [] }\n`, 'details.foo.alias'],
    ['telemetry', `${BASE}\n[telemetry.context]\nchannel = "event"\nformat = "f"\nrate = 1\n`, 'telemetry.context.rate'],
  ])('inside %s', (_where, text, key) => {
    const e = failure(text);
    expect(e.file).toBe(PATH);
    expect(e.key).toBe(key);
    expect(e.message).toBe(`${PATH}: ${key}: unknown key`);
  });

  it('a misspelt required key is reported as the typo', () => {
    const e = failure(BASE.replace('[capture]', '[captrue]'));
    expect(e.key).toBe('captrue');
  });
});

describe('regexes compile at load', () => {
  it('a bad rule regex names its key', () => {
    const e = failure(rule('state = "idle"\nregion = "title"\nmatch = { all = [{ contains = "a" }, { regex = "(x" }] }'));
    expect(e.key).toBe('rules[0].match.all[1].regex');
    expect(e.message).toMatch(/^\/x\/agents\/foo\.toml: rules\[0\]\.match\.all\[1\]\.regex: invalid regex/);
  });

  it('a bad line_regex names its key', () => {
    expect(failure(rule('state = "idle"\nregion = "title"\nmatch = { line_regex = "[a" }')).key).toBe('rules[0].match.line_regex');
  });

  it('a bad title pattern names its index', () => {
    const e = failure(BASE.replace('process_names = ["foo"]', 'process_names = ["node"]\ntitle_patterns = ["^ok", "a(?=b)"]'));
    expect(e.key).toBe('identity.title_patterns[1]');
  });

  it('the Rust \\x{HHHH} escape works in a rule (braille spinner)', () => {
    const m = parse(rule(`state = "working"\nregion = "title"\nmatch = { regex = '[\\x{2800}-\\x{28FF}]' }`));
    const match = m.rules[0]?.match;
    if (match?.kind !== 'regex') throw new Error('not a regex matcher');
    expect(match.re.test('⠙ proj')).toBe(true);
    expect(match.re.test('✳ proj')).toBe(false);
  });
});

describe('regions', () => {
  const withRegion = (r: string) => rule(`state = "idle"\nregion = "${r}"\nmatch = { contains = "x" }`);

  it.each([
    ['tail_lines(1)', { kind: 'tail_lines', n: 1 }],
    ['tail_lines(30)', { kind: 'tail_lines', n: 30 }],
    // The reference trims the spaces around the count and takes 0 (a region that sees no text).
    ['tail_lines( 5 )', { kind: 'tail_lines', n: 5 }],
    ['tail_lines( 3)', { kind: 'tail_lines', n: 3 }],
    ['tail_lines(0)', { kind: 'tail_lines', n: 0 }],
    ['visible', { kind: 'visible' }],
    ['title', { kind: 'title' }],
  ])('%s', (text, region) => {
    expect(parse(withRegion(text)).rules[0]?.region).toEqual(region);
  });

  it.each(['tail_lines()', 'tail_lines( )', 'tail_lines(-1)', 'tail_lines(1.5)', 'tail_lines(3', 'Title', 'screen'])('refuses %s', (text) => {
    expect(failure(withRegion(text)).key).toBe('rules[0].region');
  });
});

describe('matches', () => {
  it('an empty match is refused', () => {
    const e = failure(rule('state = "idle"\nregion = "title"\nmatch = {}'));
    expect(e.key).toBe('rules[0].match');
    expect(e.problem).toMatch(/empty match/);
  });

  it('two kinds in one match are refused', () => {
    const e = failure(rule('state = "idle"\nregion = "title"\nmatch = { contains = "a", regex = "b" }'));
    expect(e.key).toBe('rules[0].match');
    expect(e.problem).toMatch(/exactly one/);
  });

  it('compiles nested matchers', () => {
    const m = parse(rule('state = "idle"\nregion = "title"\nmatch = { not = { any = [{ contains = "a" }, { line_regex = "^b" }] } }'));
    const match = m.rules[0]?.match;
    expect(match?.kind).toBe('not');
    if (match?.kind !== 'not' || match.of.kind !== 'any') throw new Error('shape');
    expect(match.of.of.map((x) => x.kind)).toEqual(['contains', 'line_regex']);
  });

  it('priority must be an integer', () => {
    expect(failure(rule('state = "idle"\npriority = 1.5\nregion = "title"\nmatch = { contains = "x" }')).key).toBe('rules[0].priority');
    expect(parse(rule('state = "idle"\npriority = -3\nregion = "title"\nmatch = { contains = "x" }')).rules[0]?.priority).toBe(-3);
  });

  it('state is a closed token', () => {
    expect(failure(rule('state = "done"\nregion = "title"\nmatch = { contains = "x" }')).key).toBe('rules[0].state');
  });
});

describe('detail tokens', () => {
  it.each(['Permission', 'a b', 'perm!', ''])('refuses %j as a rule detail', (token) => {
    const e = failure(rule(`state = "blocked"\ndetail = ${JSON.stringify(token)}\nregion = "title"\nmatch = { contains = "x" }`));
    expect(e.key).toBe('rules[0].detail');
  });

  it.each(['permission', 'rate_limit', 'x-1', '9'])('accepts %j', (token) => {
    const m = parse(rule(`state = "blocked"\ndetail = "${token}"\nregion = "title"\nmatch = { contains = "x" }`));
    expect(m.rules[0]?.detail).toBe(token);
  });

  it('refuses a bad claim detail', () => {
    expect(failure(hook('{ state = "blocked", detail = "Perm" }')).key).toBe('hooks.map[0].claim.detail');
  });

  it('refuses a bad [details] key and a bad alias', () => {
    expect(failure(`${BASE}\n[details]\n"a b" = { aliases = [] }\n`).key).toBe('details["a b"]');
    expect(failure(`${BASE}\n[details]\nperm = { aliases = ["Perm"] }\n`).key).toBe('details.perm.aliases[0]');
  });

  it.each(['idle', 'working', 'blocked', 'unknown'])('refuses a detail named like the state %s', (s) => {
    const e = failure(`${BASE}\n[details]\n${s} = { aliases = [] }\n`);
    expect(e.key).toBe(`details.${s}`);
    expect(e.problem).toMatch(/state/);
  });

  it('keeps canonical details with their aliases', () => {
    const m = parse(`${BASE}\n[details]\npermission = { aliases = ["perm", "approval"] }\nerror = {}\n`);
    expect(m.details).toEqual({ permission: ['perm', 'approval'], error: [] });
  });
});

describe('hook claims', () => {
  it('reads state and lifecycle claims', () => {
    expect(parse(hook('{ state = "blocked", detail = "permission" }', 'turn_end = true')).hooks?.map[0]).toMatchObject({
      claim: { kind: 'state', state: 'blocked', detail: 'permission' },
      turnEnd: true,
    });
    expect(parse(hook('{ lifecycle = "start" }')).hooks?.map[0]?.claim).toEqual({ kind: 'lifecycle', phase: 'start' });
    expect(parse(hook('{ lifecycle = "end" }')).hooks?.map[0]?.claim).toEqual({ kind: 'lifecycle', phase: 'end' });
  });

  it('refuses a state + lifecycle mixture', () => {
    const e = failure(hook('{ state = "idle", lifecycle = "start" }'));
    expect(e.key).toBe('hooks.map[0].claim');
    expect(e.problem).toMatch(/not both/);
  });

  it('refuses an empty claim', () => {
    const e = failure(hook('{}'));
    expect(e.key).toBe('hooks.map[0].claim');
    expect(e.problem).toMatch(/empty claim/);
  });

  it('refuses a detail on a lifecycle claim', () => {
    const e = failure(hook('{ lifecycle = "end", detail = "permission" }'));
    expect(e.key).toBe('hooks.map[0].claim');
    expect(e.problem).toMatch(/lifecycle/);
  });

  it('refuses an unknown lifecycle phase and a missing claim', () => {
    expect(failure(hook('{ lifecycle = "restart" }')).key).toBe('hooks.map[0].claim.lifecycle');
    expect(failure(`${BASE}\n[hooks]\n[[hooks.map]]\nevent = "E"\n`).key).toBe('hooks.map[0].claim');
  });

  it('covers takes states and lifecycle only', () => {
    expect(parse(`${BASE}\n[hooks]\ncovers = ["idle", "lifecycle"]\n`).hooks?.covers).toEqual(['idle', 'lifecycle']);
    expect(failure(`${BASE}\n[hooks]\ncovers = ["done"]\n`).key).toBe('hooks.covers[0]');
  });
});

describe('telemetry', () => {
  it.each(['event', 'file-tail', 'screen'])('accepts channel %s', (channel) => {
    const m = parse(`${BASE}\n[telemetry.context]\nchannel = "${channel}"\nformat = "f"\n`);
    expect(m.telemetry.context).toEqual({ channel, format: 'f' });
  });

  it('refuses another channel', () => {
    expect(failure(`${BASE}\n[telemetry.context]\nchannel = "socket"\nformat = "f"\n`).key).toBe('telemetry.context.channel');
  });
});

describe('min_engine_version', () => {
  it.each(['0.4.0', '0.4.4', '0.4', '0'])('accepts %s (not newer than the engine)', (v) => {
    expect(parse(BASE.replace('"0.4.0"', `"${v}"`)).minEngineVersion).toBe(v);
  });

  it.each(['0.4.5', '0.5', '1'])('refuses %s with an upgrade message', (v) => {
    const e = failure(BASE.replace('"0.4.0"', `"${v}"`));
    expect(e.key).toBe('min_engine_version');
    expect(e.message).toBe(`${PATH}: min_engine_version: requires engine ${v}, this is ${ENGINE_VERSION}: upgrade tma`);
  });

  it('says upgrade before complaining about keys it does not know', () => {
    const e = failure(`min_engine_version = "9.0"\nnew_feature = true\n[identity]\nfuture_key = 1\n`);
    expect(e.message).toMatch(/requires engine 9\.0, this is 0\.4\.4: upgrade/);
  });

  it('refuses a junk version', () => {
    expect(failure(BASE.replace('"0.4.0"', '"v0.4"')).key).toBe('min_engine_version');
    expect(failure(BASE.replace('"0.4.0"', '0.4')).key).toBe('min_engine_version');
  });
});

describe('bad TOML', () => {
  it('names the file', () => {
    const e = failure('min_engine_version = \n');
    expect(e.file).toBe(PATH);
    expect(e.key).toBeNull();
    expect(e.message).toMatch(/^\/x\/agents\/foo\.toml: invalid TOML: .*line 1/);
  });
});
