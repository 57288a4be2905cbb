import { describe, expect, it } from 'vitest';
import { parseArgv, UsageError } from '../../cli/args.js';
import { VERBS } from '../../cli/main.js';
import { VERSION } from '../../cli/version.js';
import pkg from '../../package.json' with { type: 'json' };

describe('argv', () => {
  it('global flags go before or after the verb; short forms work', () => {
    const a = parseArgv(['-L', 'work', 'ls', '--json', '--state', 'idle,done'], VERBS);
    const b = parseArgv(['ls', '--json', '--socket-name=work', '--state', 'idle,done'], VERBS);
    for (const p of [a, b]) {
      expect(p.verb).toBe('ls');
      expect(p.globals['socket-name']).toEqual(['work']);
      expect(p.opts).toEqual({ json: true, state: 'idle,done' });
    }
  });

  it('unknown verbs and flags, missing values and repeated values are usage errors', () => {
    expect(() => parseArgv(['lss'], VERBS)).toThrow(UsageError);
    expect(() => parseArgv(['ls', '--jsn'], VERBS)).toThrow(/unexpected flag --jsn/);
    expect(() => parseArgv(['ls', '--pane'], VERBS)).toThrow(/needs a value/);
    expect(() => parseArgv(['ls', '--pane', '%1', '--pane', '%2'], VERBS)).toThrow(/more than once/);
    expect(() => parseArgv(['ls', '--json=yes'], VERBS)).toThrow(/takes no value/);
  });

  it('a verb flag is not accepted by another verb', () => {
    expect(() => parseArgv(['status', '--json'], VERBS)).toThrow(UsageError);
  });

  it('the version matches package.json', () => {
    expect(VERSION).toBe(pkg.version);
  });
});
