// Rust `regex` dialect patterns behave as they would in the reference tool.

import { describe, expect, it } from 'vitest';
import { compileRustRegex } from '../../collector/core/rust-regex.js';

const re = compileRustRegex;

describe('compileRustRegex', () => {
  it('rewrites \\x{HHHH} (the braille spinner range)', () => {
    const spinner = re('[\\x{2800}-\\x{28FF}]');
    expect(spinner.test('⠙')).toBe(true);
    expect(spinner.test('\u2800')).toBe(true);
    expect(spinner.test('\u28FF')).toBe(true);
    expect(spinner.test('\u27FF')).toBe(false);
    expect(spinner.test('\u2900')).toBe(false);
    expect(spinner.flags).toContain('u');
  });

  it('reads astral code points in \\x{…} and the other hex forms', () => {
    expect(re('\\x{1F600}').test('😀')).toBe(true);
    expect(re('\\x41').test('A')).toBe(true);
    expect(re('\\u00e9').test('é')).toBe(true);
    expect(re('\\U0001F600').test('😀')).toBe(true);
  });

  it('adds no multiline flag: ^ and $ are the ends of the text', () => {
    const r = re('^b$');
    expect(r.multiline).toBe(false);
    expect(r.test('a\nb\nc')).toBe(false);
    expect(r.test('b')).toBe(true);
    expect(re('(?m)^b$').test('a\nb\nc')).toBe(true);
  });

  it('. stops only at \\n, like Rust', () => {
    expect(re('a.b').test('a\rb')).toBe(true);
    expect(re('a.b').test('a\nb')).toBe(false);
    expect(re('(?s)a.b').test('a\nb')).toBe(true);
  });

  it('\\d, \\s, \\w and \\b are Unicode-aware', () => {
    expect(re('^\\d$').test('٣')).toBe(true);
    expect(re('^\\D$').test('٣')).toBe(false);
    expect(re('^\\s$').test('\u0085')).toBe(true);
    expect(re('^\\s$').test('\uFEFF')).toBe(false);
    expect(re('^\\w+$').test('héllo')).toBe(true);
    expect(re('\\bfoo\\b').test('a foo b')).toBe(true);
    expect(re('\\bfoo\\b').test('éfoo')).toBe(false);
    expect(re('\\Bfoo').test('éfoo')).toBe(true);
  });

  it('handles Rust-only syntax', () => {
    expect(re('(?P<n>ab)').exec('xab')?.groups?.['n']).toBe('ab');
    expect(re('(?i)ABC').test('abc')).toBe(true);
    expect(re('[[:digit:]]+').test('42')).toBe(true);
    expect(re('[[:digit:]]+').test('x')).toBe(false);
    expect(re('[]a]').test(']')).toBe(true);
    expect(re('\\#').test('#')).toBe(true);
    expect(re('\\A\\z').test('')).toBe(true);
    expect(re('(?m)\\Ab').test('a\nb')).toBe(false);
    expect(re('\\pL').test('é')).toBe(true);
    expect(re('\\p{Greek}').test('λ')).toBe(true);
  });

  it.each([
    ['(x', /invalid regex/],
    ['[a', /unclosed character class/],
    ['a(?=b)', /look-around/],
    ['(?<!a)b', /look-around/],
    ['(a)\\1', /backreferences/],
    ['\\q', /unknown escape/],
    ['a\\', /lone backslash/],
    ['\\x{zz}', /malformed/],
    ['(?x)a', /inline flag "x"/],
    ['a(?i)b', /inline flags/],
    ['[a&&b]', /set operator/],
    ['[[a]]', /nested/],
  ])('refuses %s with a clear message', (source, why) => {
    expect(() => re(source)).toThrow(why);
    expect(() => re(source)).toThrow(/^invalid regex /);
  });

  it('names the pattern in the error', () => {
    expect(() => re('(x')).toThrow('invalid regex "(x"');
  });
});
