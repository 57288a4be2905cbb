import { describe, expect, it } from 'vitest';
import { FIELD_MAX, hasControl, safeText } from '../../shared/terminal-text.js';

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
