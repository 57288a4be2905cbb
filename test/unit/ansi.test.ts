import { describe, expect, it } from 'vitest';
import { stripAnsi } from '../../collector/core/ansi.js';

const E = '\x1b';

describe('stripAnsi', () => {
  it('returns text without escapes unchanged', () => {
    expect(stripAnsi('plain ❯ 1. Yes  ')).toBe('plain ❯ 1. Yes  ');
    expect(stripAnsi('')).toBe('');
  });

  it('removes an SGR that splits a word, joining its halves', () => {
    expect(stripAnsi(`esc ${E}[2minterrupt`)).toBe('esc interrupt');
    expect(stripAnsi(`inter${E}[38;5;246mrupt${E}[0m`)).toBe('interrupt');
  });

  it('ends a CSI at the first char in U+0040..U+007E, both range ends included', () => {
    // '@' (U+0040) and '~' (U+007E) are final bytes; the char after them is text again.
    expect(stripAnsi(`a${E}[1@b`)).toBe('ab');
    expect(stripAnsi(`a${E}[2~b`)).toBe('ab');
    // '?' (U+003F) is just under the range: a parameter byte, so the CSI runs on to 'h'.
    expect(stripAnsi(`a${E}[?25hb`)).toBe('ab');
    // '\x7f' is just over the range: swallowed as part of the sequence, which ends at 'm'.
    expect(stripAnsi(`a${E}[1\x7fmb`)).toBe('ab');
  });

  it('drops an unterminated CSI through the end of the text', () => {
    expect(stripAnsi(`keep${E}[38;5;2`)).toBe('keep');
  });

  it('removes an OSC ended by BEL', () => {
    expect(stripAnsi(`a${E}]0;window title\x07b`)).toBe('ab');
  });

  it('removes an OSC ended by ST (ESC backslash), as in a hyperlink', () => {
    expect(stripAnsi(`(${E}]8;id=1;file:/x${E}\\notes.txt${E}]8;;${E}\\)`)).toBe('(notes.txt)');
  });

  it('ends an OSC at a bare ESC, consuming only that ESC', () => {
    // The '[' after the bare ESC is text again, not the start of a CSI.
    expect(stripAnsi(`a${E}]0;t${E}[31mb`)).toBe('a[31mb');
    expect(stripAnsi(`a${E}]0;t${E}xb`)).toBe('axb');
  });

  it('drops an unterminated OSC through the end of the text', () => {
    expect(stripAnsi(`keep${E}]0;never ends`)).toBe('keep');
  });

  it('drops any other ESC pair, both chars', () => {
    expect(stripAnsi(`a${E}7b${E}8c`)).toBe('abc');
    // Only ESC and the next char go: a three-char charset switch leaves its last char as text.
    expect(stripAnsi(`a${E}(Bb`)).toBe('aBb');
    expect(stripAnsi(`a${E}${E}b`)).toBe('ab');
  });

  it('drops a whole astral character after ESC, not half of it', () => {
    expect(stripAnsi(`a${E}😀b`)).toBe('ab');
  });

  it('drops a trailing ESC', () => {
    expect(stripAnsi(`done${E}`)).toBe('done');
    expect(stripAnsi(E)).toBe('');
  });

  it('keeps newlines, carriage returns and other control chars that are not escapes', () => {
    expect(stripAnsi(`a${E}[0m\r\nb\tc\x07`)).toBe('a\r\nb\tc\x07');
  });

  it('handles back-to-back sequences and non-ASCII text between them', () => {
    expect(stripAnsi(`${E}[38;5;153m❯${E}[39m ${E}[1m1. Yes${E}[0m`)).toBe('❯ 1. Yes');
  });

  it('strips a long capture full of escapes completely', () => {
    // Speed is the cycle benchmark's business (bench/); this only checks the result at size.
    const chunk = `${E}[38;5;246m─${E}[39m`;
    expect(stripAnsi(chunk.repeat(200_000))).toBe('─'.repeat(200_000));
  });
});
