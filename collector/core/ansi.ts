// Terminal escape removal for captured panes and titles. Runs on every capture, so it is one
// forward scan with indexOf jumps between escapes: no regex, nothing that can backtrack.

const ESC = 0x1b;
const BEL = 0x07;
const BACKSLASH = 0x5c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/**
 * Index just past a CSI body that starts at `i` (the char after `ESC [`). The final byte is
 * the first char in U+0040..U+007E; an unterminated sequence swallows the rest of the text.
 */
function skipCsi(s: string, i: number): number {
  const n = s.length;
  while (i < n) {
    const c = s.charCodeAt(i);
    i++;
    if (c >= 0x40 && c <= 0x7e) return i;
  }
  return n;
}

/**
 * Index just past an OSC body that starts at `i` (the char after `ESC ]`). It ends at BEL or at
 * ESC; the ESC is eaten, and so is a `\` right after it (the ST form). Whatever follows a bare
 * ESC is ordinary text again. An unterminated sequence swallows the rest of the text.
 */
function skipOsc(s: string, i: number): number {
  const n = s.length;
  while (i < n) {
    const c = s.charCodeAt(i);
    i++;
    if (c === BEL) return i;
    if (c === ESC) {
      if (i < n && s.charCodeAt(i) === BACKSLASH) i++;
      return i;
    }
  }
  return n;
}

/** Remove CSI, OSC and two-char escapes; a lone ESC at the very end is dropped too. */
export function stripAnsi(s: string): string {
  let esc = s.indexOf('\x1b');
  if (esc < 0) return s;
  const n = s.length;
  const parts: string[] = [];
  let from = 0;
  while (esc >= 0) {
    if (esc > from) parts.push(s.slice(from, esc));
    let i = esc + 1;
    if (i < n) {
      const kind = s.charCodeAt(i);
      i++;
      if (kind === OPEN_BRACKET) {
        i = skipCsi(s, i);
      } else if (kind === CLOSE_BRACKET) {
        i = skipOsc(s, i);
      } else if (isHighSurrogate(kind) && i < n && isLowSurrogate(s.charCodeAt(i))) {
        // `ESC x` drops one whole character, which may be two UTF-16 units.
        i++;
      }
    }
    from = i;
    esc = from < n ? s.indexOf('\x1b', from) : -1;
  }
  if (from < n) parts.push(s.slice(from));
  return parts.join('');
}
