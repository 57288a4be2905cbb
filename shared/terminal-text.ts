// The one gate between text a host or hub sent and a terminal. A remote field is data, never
// terminal control: every C0 control, DEL, C1 control and Unicode bidi/format override is shown
// as a visible escape (`\x1b`, `\x9b`, `\u202e`), so ESC [2J, OSC 52 clipboard writes, OSC 0
// titles, CR overwrites and BEL never act; and a field is cut to a bound so one row cannot flood
// a screen. Newline and tab are escaped too: a field is one cell of a one-line form.

/** Code points at most shown of one remote field; the cut shows as …. */
export const FIELD_MAX = 512;

// Bidi embeddings/overrides/isolates, marks, and the Arabic letter mark.
const BIDI = '\\u061c\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069';
// C0, DEL, C1 and BIDI.
const UNSAFE = new RegExp(`[\\u0000-\\u001f\\u007f-\\u009f${BIDI}]`, 'gu');
// What JSON.stringify leaves raw: DEL, C1 and BIDI (it escapes C0 itself).
const JSON_UNSAFE = new RegExp(`[\\u007f-\\u009f${BIDI}]`, 'gu');

const visible = (ch: string): string => {
  const c = ch.codePointAt(0)!;
  return c <= 0xff ? `\\x${c.toString(16).padStart(2, '0')}` : `\\u${c.toString(16).padStart(4, '0')}`;
};

/** `s` with every control shown visibly and at most `max` code points (before escaping) kept. */
export function safeText(s: string, max = FIELD_MAX): string {
  let t = s;
  if (t.length > max) {
    const cps = [...t];
    if (cps.length > max) t = `${cps.slice(0, Math.max(0, max - 1)).join('')}…`;
  }
  return t.replace(UNSAFE, visible);
}

/**
 * A block of printed text (a verb's lines, an error relayed from a hub) made safe as a whole: each
 * line as safeText keeps it, the newlines between them kept, so text built from remote fields
 * cannot act on a terminal even where one field was missed.
 */
export function safeLines(s: string, maxLine = 4 * FIELD_MAX): string {
  return s
    .split('\n')
    .map((l) => safeText(l, maxLine).replace(/\\x09/g, '\t'))
    .join('\n');
}

/** As safeText for an optional field: null and undefined stay as they are. */
export function safeOpt<T extends string | null | undefined>(s: T, max = FIELD_MAX): T {
  return (typeof s === 'string' ? safeText(s, max) : s) as T;
}

/**
 * JSON text with every character UNSAFE names written as a `\uXXXX` escape. Outside strings JSON
 * holds none of them, so the document stays the same one, and a terminal showing it stays inert.
 */
export function inertJson(json: string): string {
  return json.replace(JSON_UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** True when `s` holds a byte a terminal would act on (for tests and last-line checks). */
export function hasControl(s: string, allow: string = '\n'): boolean {
  for (const m of s.matchAll(UNSAFE)) if (!allow.includes(m[0])) return true;
  return false;
}
