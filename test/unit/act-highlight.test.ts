// The highlighted-option check on OpenCode's permission dialogs as painted (our own fixtures, 256
// colours and truecolor), with the highlight where OpenCode opens it and moved off the option.

import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { optionHighlighted } from '../../collector/act/highlight.js';
import { loadFixture } from '../support/fixture-file.js';

const DIR = fileURLToPath(new URL('../fixtures/', import.meta.url));
const screen = (name: string) => loadFixture(join(DIR, name)).screen;

/** The same row with the accent background moved from "Allow once" to `to`. */
function moved(s: string, to: 'Allow always' | 'Reject'): string {
  const line = s.split('\n').find((l) => l.includes('Allow once') && l.includes('Reject'))!;
  const accent = /\x1b\[48;(?:5;\d+|2;\d+;\d+;\d+)m(?= \x1b\[[0-9;]*mAllow once)/.exec(line)![0];
  const panel = /Allow once\x1b\[[0-9;]*m \x1b\[(48;[0-9;]+)m/.exec(line)![1]!;
  const off = line.replace(accent, `\x1b[${panel}m`);
  const on = off.replace(new RegExp(`(\\x1b\\[[0-9;]*m)${to}`), (m, sgr: string) => `${accent}${sgr}${to}\x1b[${panel}m`);
  return s.replace(line, on);
}

describe('optionHighlighted', () => {
  for (const name of ['opencode-shell-command-dialog.txt', 'opencode-permission-dialog.txt']) {
    it(`${name}: "Allow once" is highlighted where OpenCode opens the dialog`, () => {
      expect(optionHighlighted(screen(name), 'Allow once')).toBe(true);
      expect(optionHighlighted(screen(name), 'Reject')).toBe(false);
      expect(optionHighlighted(screen(name), 'Allow always')).toBe(false);
    });

    it(`${name}: the cursor moved to another option is not "Allow once"`, () => {
      for (const to of ['Allow always', 'Reject'] as const) {
        const s = moved(screen(name), to);
        expect(optionHighlighted(s, 'Allow once'), to).toBe(false);
        expect(optionHighlighted(s, to), to).toBe(true);
      }
    });
  }

  it('reads reverse video as a highlight, and a plain screen as none', () => {
    expect(optionHighlighted('  \x1b[7m Allow once \x1b[27m  Allow always   Reject', 'Allow once')).toBe(true);
    expect(optionHighlighted('   Allow once   Allow always   Reject', 'Allow once')).toBe(false);
    // An option alone on its line has nothing to stand out from; one not shown is not picked.
    expect(optionHighlighted('\x1b[48;5;215m Allow once \x1b[0m', 'Allow once')).toBe(false);
    expect(optionHighlighted('nothing here', 'Allow once')).toBe(false);
  });

  it('carries the state across lines and reads the last line showing the option', () => {
    const old = '\x1b[48;5;215m Allow once \x1b[48;5;234m Reject\n';
    expect(optionHighlighted(`${old}\x1b[48;5;234m Allow once   Reject \x1b[48;5;215mx`, 'Allow once')).toBe(false);
    expect(optionHighlighted('\x1b[48;5;215m\n Allow once\x1b[49m Reject', 'Allow once')).toBe(true);
  });
});
