import { describe, expect, it } from 'vitest';
import { regionText, rustLines } from '../../collector/core/regions.js';
import type { Snapshot } from '../../collector/core/types.js';

function snap(tail: string, over: Partial<Snapshot> = {}): Snapshot {
  return { title: '', tail, visibleHeight: null, scrollPosition: null, capturedAt: 1_000, ...over };
}

describe('rustLines', () => {
  it('has no lines for the empty string', () => {
    expect(rustLines('')).toEqual([]);
  });

  it('does not open an empty last line after a final newline', () => {
    expect(rustLines('a\nb\n')).toEqual(['a', 'b']);
    expect(rustLines('a\nb')).toEqual(['a', 'b']);
  });

  it('keeps blank lines in the middle and at the start', () => {
    expect(rustLines('\na\n\nb')).toEqual(['', 'a', '', 'b']);
  });

  it('yields one empty line per newline for text made only of newlines', () => {
    expect(rustLines('\n')).toEqual(['']);
    expect(rustLines('\n\n\n')).toEqual(['', '', '']);
  });

  it('strips one \\r before each \\n, including a trailing \\r\\n', () => {
    expect(rustLines('a\r\nb\r\n')).toEqual(['a', 'b']);
    expect(rustLines('a\r\r\nb')).toEqual(['a\r', 'b']);
    expect(rustLines('\r\n')).toEqual(['']);
  });

  it('keeps a \\r that is not followed by \\n', () => {
    expect(rustLines('a\rb\nc\r')).toEqual(['a\rb', 'c\r']);
  });
});

describe('regionText', () => {
  const five = 'l1\nl2\nl3\nl4\nl5\n';

  it('title: the title with escapes removed; the tail is ignored', () => {
    const s = snap('screen text', { title: '\x1b]0;x\x07⠂ \x1b[1mRun\x1b[0m' });
    expect(regionText({ kind: 'title' }, s)).toBe('⠂ Run');
  });

  it('tail_lines: the last N lines joined by \\n', () => {
    expect(regionText({ kind: 'tail_lines', n: 2 }, snap(five))).toBe('l4\nl5');
  });

  it('tail_lines: N exactly the line count, one under and one over', () => {
    expect(regionText({ kind: 'tail_lines', n: 5 }, snap(five))).toBe('l1\nl2\nl3\nl4\nl5');
    expect(regionText({ kind: 'tail_lines', n: 4 }, snap(five))).toBe('l2\nl3\nl4\nl5');
    expect(regionText({ kind: 'tail_lines', n: 6 }, snap(five))).toBe('l1\nl2\nl3\nl4\nl5');
    expect(regionText({ kind: 'tail_lines', n: 500 }, snap(five))).toBe('l1\nl2\nl3\nl4\nl5');
  });

  it('tail_lines: counts raw lines before stripping, so an escape-only line still counts', () => {
    const tail = 'old\n\x1b[0m\nnew';
    expect(regionText({ kind: 'tail_lines', n: 2 }, snap(tail))).toBe('\nnew');
  });

  it('tail_lines: strips escapes and \\r\\n endings, keeps trailing spaces', () => {
    const tail = 'a\r\n\x1b[38;5;246mb  \x1b[39m\r\n';
    expect(regionText({ kind: 'tail_lines', n: 2 }, snap(tail))).toBe('a\nb  ');
  });

  it('tail_lines: an escape opened on a kept line and closed on the next is removed as one', () => {
    // The join happens before stripping, so a sequence spanning the cut is seen whole.
    const tail = 'drop\nkeep\x1b]8;;file:/a\nb\x1b\\tail';
    expect(regionText({ kind: 'tail_lines', n: 2 }, snap(tail))).toBe('keeptail');
  });

  it('tail_lines: counts from the last painted row, not from the blank rows tmux prints below it', () => {
    const tall = five + '\n'.repeat(60);
    expect(regionText({ kind: 'tail_lines', n: 2 }, snap(tall))).toBe('l4\nl5');
  });

  it('tail_lines: a trailing row of spaces or of escapes alone is blank too', () => {
    const tail = five + '    \n\x1b[0m\n\x1b[48;5;236m  \x1b[0m\n';
    expect(regionText({ kind: 'tail_lines', n: 1 }, snap(tail))).toBe('l5');
  });

  it('tail_lines: blank rows between painted rows still count', () => {
    expect(regionText({ kind: 'tail_lines', n: 2 }, snap('a\nb\n\n\nc\n\n\n'))).toBe('\nc');
  });

  it('tail_lines: a capture of blank rows only gives empty text', () => {
    expect(regionText({ kind: 'tail_lines', n: 3 }, snap('\n\n  \n'))).toBe('');
  });

  it('visible: keeps the blank rows of the screen, so history above the pane stays out', () => {
    expect(regionText({ kind: 'visible' }, snap('old\nl1\n\n\n', { visibleHeight: 3 }))).toBe('l1\n\n');
  });

  it('tail_lines: an empty capture gives empty text', () => {
    expect(regionText({ kind: 'tail_lines', n: 3 }, snap(''))).toBe('');
  });

  it('visible: uses the pane height as N', () => {
    expect(regionText({ kind: 'visible' }, snap(five, { visibleHeight: 3 }))).toBe('l3\nl4\nl5');
    expect(regionText({ kind: 'visible' }, snap(five, { visibleHeight: 1 }))).toBe('l5');
  });

  it('visible: height exactly, one under and one over the line count', () => {
    expect(regionText({ kind: 'visible' }, snap(five, { visibleHeight: 5 }))).toBe('l1\nl2\nl3\nl4\nl5');
    expect(regionText({ kind: 'visible' }, snap(five, { visibleHeight: 4 }))).toBe('l2\nl3\nl4\nl5');
    expect(regionText({ kind: 'visible' }, snap(five, { visibleHeight: 6 }))).toBe('l1\nl2\nl3\nl4\nl5');
  });

  it('visible: an unknown (null) or zero height means the whole tail', () => {
    expect(regionText({ kind: 'visible' }, snap(five, { visibleHeight: null }))).toBe('l1\nl2\nl3\nl4\nl5');
    expect(regionText({ kind: 'visible' }, snap(five, { visibleHeight: 0 }))).toBe('l1\nl2\nl3\nl4\nl5');
  });

  it('visible: hides a dialog that scrolled above the visible rows', () => {
    const tail = '❯ 1. Yes\n' + 'x\n'.repeat(10) + 'prompt';
    expect(regionText({ kind: 'visible' }, snap(tail, { visibleHeight: 10 }))).not.toContain('❯ 1. Yes');
    expect(regionText({ kind: 'visible' }, snap(tail, { visibleHeight: 12 }))).toContain('❯ 1. Yes');
  });
});
