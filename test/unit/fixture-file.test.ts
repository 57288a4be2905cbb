import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stripAnsi } from '../../collector/core/ansi.js';
import { loadFixture, parseFixture, snapshotOf } from '../support/fixture-file.js';

const HEADERS = ['# agent: demo', '# state: blocked', '# title: ✋  Action Required', '# command: demo-bin', '# pid: 4242', '# captured_at: 1784594552'];
const SCREEN = '\x1b[1mDo you want\x1b[0m?  \n\n  ❯ 1. Yes   \n\n';

function file(headers: string[] = HEADERS, screen = SCREEN): string {
  return headers.join('\n') + '\n---\n' + screen;
}

describe('parseFixture', () => {
  it('reads every header and keeps the screen byte-for-byte', () => {
    const fx = parseFixture(file(), 'demo_blocked.txt');
    expect(fx).toEqual({
      agent: 'demo',
      state: 'blocked',
      title: '✋  Action Required',
      command: 'demo-bin',
      pid: 4242,
      capturedAt: 1_784_594_552_000,
      screen: SCREEN,
    });
  });

  it('does not trim the screen, before or after ANSI stripping', () => {
    const fx = parseFixture(file(HEADERS, '\n\n  padded  \n\n\n'), 'f.txt');
    expect(fx.screen).toBe('\n\n  padded  \n\n\n');
    expect(stripAnsi(parseFixture(file(), 'f.txt').screen)).toBe('Do you want?  \n\n  ❯ 1. Yes   \n\n');
  });

  it('keeps an empty screen and a screen without a final newline', () => {
    expect(parseFixture(file(HEADERS, ''), 'f.txt').screen).toBe('');
    expect(parseFixture(file(HEADERS, 'last'), 'f.txt').screen).toBe('last');
    expect(parseFixture(HEADERS.join('\n') + '\n---', 'f.txt').screen).toBe('');
  });

  it('a later --- line belongs to the screen', () => {
    expect(parseFixture(file(HEADERS, 'a\n---\nb\n'), 'f.txt').screen).toBe('a\n---\nb\n');
  });

  it('accepts the headers in any order', () => {
    const fx = parseFixture(file([...HEADERS].reverse()), 'f.txt');
    expect(fx.agent).toBe('demo');
    expect(fx.pid).toBe(4242);
  });

  it('captured_at: a 10-digit value is seconds, a 13-digit value is already ms', () => {
    const at = (v: string) => parseFixture(file(HEADERS.map((h) => (h.startsWith('# captured_at') ? `# captured_at: ${v}` : h))), 'f.txt').capturedAt;
    expect(at('1784594552')).toBe(1_784_594_552_000);
    expect(at('1784991292382')).toBe(1_784_991_292_382);
    // The cut-off: just under 10^12 is seconds, exactly 10^12 is ms.
    expect(at('999999999999')).toBe(999_999_999_999_000);
    expect(at('1000000000000')).toBe(1_000_000_000_000);
  });

  it('an empty title is allowed', () => {
    const h = HEADERS.map((x) => (x.startsWith('# title') ? '# title:' : x));
    expect(parseFixture(file(h), 'f.txt').title).toBe('');
  });

  describe('malformed files throw, naming the file and the fault', () => {
    const bad = (text: string) => () => parseFixture(text, 'broken_w60.txt');

    it.each(['agent', 'state', 'title', 'command', 'pid', 'captured_at'])('missing %s', (key) => {
      const h = HEADERS.filter((x) => !x.startsWith(`# ${key}:`));
      expect(bad(file(h))).toThrow(new RegExp(`broken_w60\\.txt.*missing header.*${key}`));
    });

    it('a duplicated header', () => {
      expect(bad(file([...HEADERS, '# pid: 1']))).toThrow(/broken_w60\.txt.*"pid" given twice/);
    });

    it('an unknown header', () => {
      expect(bad(file([...HEADERS, '# width: 60']))).toThrow(/broken_w60\.txt.*unknown header "width"/);
    });

    it('a line that is not a header before the separator', () => {
      expect(bad(file([...HEADERS.slice(0, 3), '', ...HEADERS.slice(3)]))).toThrow(/broken_w60\.txt: line 4/);
      expect(bad(file(['agent: demo', ...HEADERS.slice(1)]))).toThrow(/broken_w60\.txt: line 1/);
    });

    it('no separator line', () => {
      expect(bad(HEADERS.join('\n') + '\n')).toThrow(/broken_w60\.txt.*no "---" line/);
      expect(bad(HEADERS.join('\n') + '\n--- \nscreen')).toThrow(/broken_w60\.txt/);
    });

    it('a state that is not a state token', () => {
      const h = HEADERS.map((x) => (x.startsWith('# state') ? '# state: done' : x));
      expect(bad(file(h))).toThrow(/broken_w60\.txt.*"state" is not a state token/);
    });

    it('a non-numeric pid or captured_at', () => {
      const pid = HEADERS.map((x) => (x.startsWith('# pid') ? '# pid: -1' : x));
      expect(bad(file(pid))).toThrow(/broken_w60\.txt.*"pid"/);
      const at = HEADERS.map((x) => (x.startsWith('# captured_at') ? '# captured_at: 17845e5' : x));
      expect(bad(file(at))).toThrow(/broken_w60\.txt.*"captured_at"/);
    });

    it('an empty agent or command', () => {
      expect(bad(file(HEADERS.map((x) => (x.startsWith('# agent') ? '# agent: ' : x))))).toThrow(/"agent" is empty/);
      expect(bad(file(HEADERS.map((x) => (x.startsWith('# command') ? '# command:' : x))))).toThrow(/"command" is empty/);
    });
  });
});

describe('loadFixture', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tma-fixture-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reads a file from disk and names it in errors', () => {
    const good = join(dir, 'demo_idle.txt');
    writeFileSync(good, file());
    expect(loadFixture(good).screen).toBe(SCREEN);
    const broken = join(dir, 'demo_broken.txt');
    writeFileSync(broken, HEADERS.slice(1).join('\n') + '\n---\n');
    expect(() => loadFixture(broken)).toThrow(/demo_broken\.txt.*agent/);
  });
});

describe('snapshotOf', () => {
  const fx = parseFixture(file(), 'f.txt');

  it('defaults: unknown height, not scrolled, taken at the capture time', () => {
    expect(snapshotOf(fx)).toEqual({
      title: '✋  Action Required',
      tail: SCREEN,
      visibleHeight: null,
      scrollPosition: null,
      capturedAt: 1_784_594_552_000,
    });
  });

  it('applies a pane height and a time offset', () => {
    const s = snapshotOf(fx, { visibleHeight: 12, offsetMs: 10 });
    expect(s.visibleHeight).toBe(12);
    expect(s.capturedAt).toBe(1_784_594_552_010);
  });
});
