import { describe, expect, it } from 'vitest';
import { toJsonLine } from '../../shared/row.js';
import { FIELD_MAX, hasControl, inertJson, safeText } from '../../shared/terminal-text.js';

describe('safeText: remote text shown, never acted on', () => {
  it('shows ESC, OSC, CR, BEL, C1 CSI and bidi overrides as visible escapes', () => {
    expect(safeText('\x1b[2J')).toBe('\\x1b[2J');
    expect(safeText('\x1b]52;c;aGk=\x07')).toBe('\\x1b]52;c;aGk=\\x07');
    expect(safeText('ok\rEVIL')).toBe('ok\\x0dEVIL');
    expect(safeText('\x9b31m')).toBe('\\x9b31m');
    expect(safeText('a\u202eb\u2066c')).toBe('a\\u202eb\\u2066c');
    expect(safeText('tab\tnl\n\x7f')).toBe('tab\\x09nl\\x0a\\x7f');
    expect(safeText('plain é ✓ 日本')).toBe('plain é ✓ 日本');
    for (const s of ['\x1b[2J', '\x9b', '\u202e', '\r', '\x07']) expect(hasControl(safeText(s))).toBe(false);
  });
  it('bounds a field', () => {
    const out = safeText('x'.repeat(10_000));
    expect([...out]).toHaveLength(FIELD_MAX);
    expect(out.endsWith('…')).toBe(true);
    expect(safeText('abcdef', 4)).toBe('abc…');
  });
});

describe('inertJson: the same document, nothing a terminal acts on', () => {
  it('escapes what JSON.stringify leaves raw, and parses back to the same value', () => {
    const doc = { schema: 1, s: 'a\x1b]0;t\x07\x7f\x9b31m\u202e\u2066\u061c\u200f b', n: [1, 2.5, null, true] };
    const raw = JSON.stringify(doc);
    expect(hasControl(raw)).toBe(true);
    for (const line of [inertJson(raw), toJsonLine(doc)]) {
      expect(hasControl(line)).toBe(false);
      expect(JSON.parse(line)).toEqual(doc);
    }
    expect(inertJson('{"a":"plain é ✓"}')).toBe('{"a":"plain é ✓"}');
  });
});
