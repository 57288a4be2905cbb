import { describe, expect, it } from 'vitest';
import { matches } from '../../collector/core/matchers.js';
import type { Matcher } from '../../collector/core/types.js';

const contains = (text: string): Matcher => ({ kind: 'contains', text });
const regex = (source: string, flags = 'u'): Matcher => ({ kind: 'regex', source, re: new RegExp(source, flags) });
const lineRegex = (source: string, flags = 'u'): Matcher => ({ kind: 'line_regex', source, re: new RegExp(source, flags) });

describe('contains', () => {
  it('is a case-sensitive substring test', () => {
    expect(matches(contains('esc to interrupt'), 'Working (esc to interrupt)')).toBe(true);
    expect(matches(contains('Esc to interrupt'), 'Working (esc to interrupt)')).toBe(false);
    expect(matches(contains('interrupt)'), 'Working (esc to interrupt')).toBe(false);
  });

  it('finds text that spans lines', () => {
    expect(matches(contains('a\nb'), 'xa\nby')).toBe(true);
  });
});

describe('regex', () => {
  it('searches anywhere in the text', () => {
    expect(matches(regex('Work\\w+'), 'prefix • Working (0s)')).toBe(true);
    expect(matches(regex('Work\\d'), 'prefix • Working (0s)')).toBe(false);
  });

  it('anchors ^ and $ to the ends of the whole text, not to lines', () => {
    const text = 'first\nsecond\nthird';
    expect(matches(regex('^first'), text)).toBe(true);
    expect(matches(regex('^second'), text)).toBe(false);
    expect(matches(regex('second$'), text)).toBe(false);
    expect(matches(regex('third$'), text)).toBe(true);
  });

  it('gives the same answer on every call even with a g or y flag', () => {
    const g = regex('Yes', 'gu');
    const text = '❯ 1. Yes';
    expect(matches(g, text)).toBe(true);
    expect(matches(g, text)).toBe(true);
    expect(matches(g, text)).toBe(true);
    // Sticky must not pin the search to the start (or to a previous lastIndex).
    const y = regex('Yes', 'yu');
    expect(matches(y, text)).toBe(true);
    expect(matches(y, text)).toBe(true);
    expect(matches(y, 'No')).toBe(false);
  });

  it('leaves the manifest RegExp lastIndex untouched', () => {
    const m = regex('Yes', 'gu');
    if (m.kind !== 'regex') throw new Error('unreachable');
    m.re.lastIndex = 0;
    matches(m, 'Yes Yes');
    expect(m.re.lastIndex).toBe(0);
  });
});

describe('line_regex', () => {
  it('is true when any single line matches, with ^ and $ at line ends', () => {
    const text = 'header\n  ❯ 1. Yes\nfooter';
    expect(matches(lineRegex('^\\s*❯ 1\\. Yes$'), text)).toBe(true);
    expect(matches(lineRegex('^header$'), text)).toBe(true);
    expect(matches(lineRegex('^footer$'), text)).toBe(true);
    expect(matches(lineRegex('^nothing$'), text)).toBe(false);
  });

  it('does not match across a line break', () => {
    expect(matches(lineRegex('header.footer', 'su'), 'header\nfooter')).toBe(false);
    expect(matches(regex('header.footer', 'su'), 'header\nfooter')).toBe(true);
  });

  it('gives the same answer on every call with a g flag', () => {
    const m = lineRegex('^b$', 'gu');
    expect(matches(m, 'a\nb')).toBe(true);
    expect(matches(m, 'a\nb')).toBe(true);
  });
});

describe('any / all / not', () => {
  const t = 'Allow once   Allow always   Reject';
  const yes = contains('Allow once');
  const no = contains('Deny');

  it('any needs one match; all needs every match; not inverts', () => {
    expect(matches({ kind: 'any', of: [no, yes] }, t)).toBe(true);
    expect(matches({ kind: 'any', of: [no, no] }, t)).toBe(false);
    expect(matches({ kind: 'all', of: [yes, contains('Reject')] }, t)).toBe(true);
    expect(matches({ kind: 'all', of: [yes, no] }, t)).toBe(false);
    expect(matches({ kind: 'not', of: no }, t)).toBe(true);
    expect(matches({ kind: 'not', of: yes }, t)).toBe(false);
  });

  it('empty any is false and empty all is true', () => {
    expect(matches({ kind: 'any', of: [] }, t)).toBe(false);
    expect(matches({ kind: 'all', of: [] }, t)).toBe(true);
  });

  it('nests', () => {
    // all(any(Deny, Reject), not(all(Allow once, Deny)))
    const nested: Matcher = {
      kind: 'all',
      of: [
        { kind: 'any', of: [no, contains('Reject')] },
        { kind: 'not', of: { kind: 'all', of: [yes, no] } },
      ],
    };
    expect(matches(nested, t)).toBe(true);
    expect(matches(nested, t + ' Deny')).toBe(false);
    expect(matches(nested, 'Allow once')).toBe(false);
    expect(matches({ kind: 'not', of: { kind: 'not', of: yes } }, t)).toBe(true);
  });
});
