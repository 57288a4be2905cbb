// The verb table (cli/verb-table.ts) is the one place a verb's facts live: the parser, `tma help`,
// `tma VERB --help`, the typo suggestion and the completion scripts are all written from it. These
// tests read each of them back against the table, and add a verb to a copy of the table to show
// that one entry is all a new verb needs.

import { afterEach, describe, expect, it, vi } from 'vitest';
import { bool, flagsByVerb, GLOBAL_FLAGS, parseArgv, text, UsageError, verb, visibleVerbs, type Parsed, type VerbTable } from '../../cli/args.js';
import { overview, suggestVerb, verbHelp } from '../../cli/help.js';
import { run } from '../../cli/main.js';
import { VERB_FLAGS, VERB_TABLE } from '../../cli/verb-table.js';
import { completionScript } from '../../cli/verbs/completions.js';

const table: VerbTable = VERB_TABLE;
const visible = visibleVerbs(table);
const hidden = Object.keys(table).filter((v) => !visible.includes(v));
const globals = Object.keys(GLOBAL_FLAGS).map((f) => `--${f}`);

/** stdout and stderr of one in-process `tma` run, and its exit code. */
async function tma(argv: string[], t: VerbTable = table): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((c) => ((stdout += String(c)), true));
  vi.spyOn(process.stderr, 'write').mockImplementation((c) => ((stderr += String(c)), true));
  try {
    const code = await run(argv, {}, t);
    return { code, stdout, stderr };
  } finally {
    vi.restoreAllMocks();
  }
}
afterEach(() => vi.restoreAllMocks());

/** The words after `opts=` in the bash script's case for `v`. */
function bashWords(script: string, v: string): string[] {
  const m = new RegExp(`^    ${v.replace(/-/g, '\\-')}\\) opts="([^"]*)" ;;$`, 'm').exec(script);
  if (!m) throw new Error(`no bash case for ${v}`);
  return m[1]!.split(' ');
}

describe('the verb table', () => {
  it('has the verbs people run, and hides only the hook-side ones', () => {
    expect(hidden.sort()).toEqual(['clear-attention', 'event', 'supervise']);
    expect(Object.keys(VERB_FLAGS)).toEqual(Object.keys(table));
  });

  it('each verb has usage lines starting `tma`, help, and overview lines unless hidden', () => {
    for (const [v, e] of Object.entries(table)) {
      expect(e.usage.length, v).toBeGreaterThan(0);
      for (const u of e.usage) expect(u, v).toMatch(/^tma /);
      expect(e.help, v).toMatch(/^ {2}\S/);
      expect(e.overview.length > 0, v).toBe(e.section !== 'hidden');
    }
  });

  it('a flag name means one type, and one set of values, in every verb', () => {
    const seen = new Map<string, string>();
    for (const e of Object.values(table)) {
      for (const [f, spec] of Object.entries(e.flags)) {
        const shape = JSON.stringify([spec.type, spec.values ?? null]);
        expect(seen.get(f) ?? shape, f).toBe(shape);
        seen.set(f, shape);
        expect(Object.hasOwn(GLOBAL_FLAGS, f), `${f} is a global flag`).toBe(false);
      }
    }
  });
});

describe('help is written from the table', () => {
  it("`tma help VERB` and `tma VERB --help` print the entry's usage lines, then its help", async () => {
    for (const v of Object.keys(table)) {
      const e = table[v]!;
      const want = `usage: ${e.usage.join('\n')}\n${e.help}\n`;
      expect(verbHelp(table, v)).toBe(want);
      expect(await tma(['help', v]), v).toEqual({ code: 0, stdout: want, stderr: '' });
      expect(await tma([v, '--help']), v).toEqual({ code: 0, stdout: want, stderr: '' });
    }
  });

  it("the overview lists every visible verb's overview lines, in table order, and no hidden verb", async () => {
    const text = overview(table);
    let at = 0;
    for (const v of visible) {
      for (const [synopsis, summary] of table[v]!.overview) {
        const i = text.indexOf(`  ${synopsis.split('\n')[0]}`, at);
        expect(i, synopsis).toBeGreaterThanOrEqual(at);
        expect(text.indexOf(summary.split('\n')[0]!, i), summary).toBeGreaterThan(i);
        at = i;
      }
    }
    for (const v of hidden) expect(text).not.toMatch(new RegExp(`^ {2}${v}\\b`, 'm'));
    expect(await tma(['help'])).toEqual({ code: 0, stdout: text, stderr: '' });
    expect(await tma([])).toEqual({ code: 2, stdout: text, stderr: '' });
  });

  it('a mistyped verb is suggested from the visible verbs only', async () => {
    expect(suggestVerb(table, 'jmp')).toBe('jump');
    expect(suggestVerb(table, 'supervis')).not.toBe('supervise');
    expect(await tma(['jmp'])).toMatchObject({ code: 2, stderr: 'tma: unknown command "jmp"; did you mean "jump"?\n' });
    expect(await tma(['help', 'jmp'])).toMatchObject({ code: 2, stderr: 'tma: unknown command "jmp"; did you mean "jump"?\n' });
  });
});

describe('completions are written from the table', () => {
  it("bash: the verb list is the visible verbs, each case is the verb's flags, the globals and its words", () => {
    const s = completionScript('bash', table);
    const top = /compgen -W "([^"]*)" -- "\$cur"\)\)\n {4}return/.exec(s)![1]!.split(' ');
    expect(top).toEqual([...visible, ...globals]);
    for (const v of visible) {
      const p = table[v]!.positionals;
      expect(bashWords(s, v), v).toEqual([...Object.keys(table[v]!.flags).map((f) => `--${f}`), ...globals, ...(p === false ? [] : (p.words ?? []))]);
    }
    for (const v of hidden) expect(s).not.toContain(`    ${v}) `);
    // Values offered after a flag come from the flags' own `values`.
    expect(s).toContain('--format) COMPREPLY=($(compgen -W "tmux plain json prom" -- "$cur")); return ;;');
    expect(s).toContain('--until) COMPREPLY=($(compgen -W "blocked working idle unknown done" -- "$cur")); return ;;');
  });

  it('zsh and fish list the same verbs', () => {
    expect(/compadd -- (.*)\n {4}return/.exec(completionScript('zsh', table))![1]!.split(' ')).toEqual(visible);
    const fish = completionScript('fish', table);
    expect(/__fish_use_subcommand' -a '([^']*)'/.exec(fish)![1]!.split(' ')).toEqual(visible);
    for (const v of visible) {
      const flags = [...fish.matchAll(new RegExp(`__fish_seen_subcommand_from ${v}' -l (\\S+)`, 'g'))].map((m) => m[1]);
      expect(flags, v).toEqual(Object.keys(table[v]!.flags));
    }
  });
});

describe('parsing is typed by the table', () => {
  it('an unknown flag is a usage error naming the verb, exit 2', async () => {
    expect(() => parseArgv(['ls', '--bogus'], VERB_FLAGS)).toThrow(new UsageError('unexpected flag --bogus for "ls"'));
    expect(await tma(['ls', '--bogus'])).toEqual({ code: 2, stdout: '', stderr: 'tma: unexpected flag --bogus for "ls"\n' });
    expect(await tma(['--bogus'])).toEqual({ code: 2, stdout: '', stderr: 'tma: unexpected flag --bogus\n' });
  });

  it('values arrive as their types: booleans true, lists arrays, numbers numbers, aliases resolved', () => {
    const p = parseArgv(
      ['-L', 'a', 'act', 'approve', '--socket-name=b', '--arg', 'x', '--arg', 'y', '--expect-episode-ms', '1700000000000', '--yes'],
      VERB_FLAGS,
    );
    expect(p.globals['socket-name']).toEqual(['a', 'b']);
    expect(p.opts).toEqual({ arg: ['x', 'y'], 'expect-episode-ms': 1700000000000, yes: true });
    expect(parseArgv(['jump', '-c', '/dev/pts/1'], VERB_FLAGS).opts).toEqual({ client: '/dev/pts/1' });
    expect(parseArgv(['supervise', '--timeout-ms', '500'], VERB_FLAGS).opts['timeout-ms']).toBe(500);
  });

  it("a number flag refuses what is not a plain number, in the verb's words", () => {
    for (const bad of ['x', '-1', '1.5', '1e3', '']) {
      expect(() => parseArgv(['act', 'approve', '--expect-episode-ms', bad], VERB_FLAGS), bad).toThrow(
        new UsageError(`--expect-episode-ms needs an epoch in ms, got "${bad}"`),
      );
    }
  });

  it('a verb that takes no words refuses a stray one, as the table says', async () => {
    for (const v of Object.keys(table).filter((x) => table[x]!.positionals === false)) {
      expect(await tma([v, 'stray']), v).toEqual({ code: 2, stdout: '', stderr: `tma: ${v} takes no arguments, got "stray" (see \`tma help ${v}\`)\n` });
    }
  });
});

describe('adding a verb', () => {
  it('is one entry: it parses, runs with typed options, has help, is suggested and completed', async () => {
    const FROB = { loud: bool, name: text, times: { type: 'number', integer: true } } as const;
    let got: Parsed<typeof FROB> | null = null;
    const frob = verb({
      flags: FROB,
      usage: ['tma frob [--loud] [--name N] [--times K]'],
      help: '  frob the agents\n\n  tma frob --times 2',
      overview: [['frob [--loud]', 'frob the agents']],
      section: 'commands',
      positionals: false,
      load: async () => async (p: Parsed<typeof FROB>) => {
        got = p;
        // Typed: a number, a boolean and a string, no casts.
        const times: number = p.opts.times ?? 1;
        const loud: boolean = p.opts.loud === true;
        const name: string = p.opts.name ?? '';
        process.stdout.write(`${name}${loud ? '!' : ''}×${times}\n`);
        return 0;
      },
    });
    const withFrob: VerbTable = { ...table, frob };

    expect(await tma(['frob', '--loud', '--times', '3', '--name', 'x'], withFrob)).toEqual({ code: 0, stdout: 'x!×3\n', stderr: '' });
    expect(got!.opts).toEqual({ loud: true, times: 3, name: 'x' });
    expect(await tma(['frob', '--times', 'three'], withFrob)).toEqual({ code: 2, stdout: '', stderr: 'tma: --times takes a number, not "three"\n' });
    expect(await tma(['frob', 'stray'], withFrob)).toMatchObject({ code: 2, stderr: expect.stringContaining('frob takes no arguments') });
    expect((await tma(['help', 'frob'], withFrob)).stdout).toBe('usage: tma frob [--loud] [--name N] [--times K]\n  frob the agents\n\n  tma frob --times 2\n');
    expect(overview(withFrob)).toMatch(/^ {2}frob \[--loud\] +frob the agents$/m);
    expect(await tma(['frb'], withFrob)).toMatchObject({ stderr: 'tma: unknown command "frb"; did you mean "frob"?\n' });
    expect(bashWords(completionScript('bash', withFrob), 'frob')).toEqual(['--loud', '--name', '--times', ...globals]);
    expect(flagsByVerb(withFrob).frob).toBe(FROB);
    // The real table is untouched.
    expect(await tma(['frob'])).toMatchObject({ code: 2, stderr: expect.stringContaining('unknown command "frob"') });
  });
});
