// Region extraction: which slice of a snapshot a rule looks at.

import { stripAnsi } from './ansi.js';
import type { Region, Snapshot } from './types.js';

/**
 * Line split with the semantics of Rust's `str::lines()`, which the reference engine uses:
 * a `\r` is removed only when it sits right before a `\n` (a bare `\r` at the very end of
 * unterminated text stays), a final `\n` does not open an empty last line, and "" has no lines.
 */
export function rustLines(s: string): string[] {
  if (s === '') return [];
  const out: string[] = [];
  const n = s.length;
  let from = 0;
  while (from < n) {
    const nl = s.indexOf('\n', from);
    if (nl < 0) {
      out.push(s.slice(from));
      break;
    }
    const end = nl > from && s.charCodeAt(nl - 1) === 0x0d ? nl - 1 : nl;
    out.push(s.slice(from, end));
    from = nl + 1;
  }
  return out;
}

/** The last `n` lines of a raw capture, escapes removed after the join (n <= 0 keeps none). */
function lastLines(raw: string, n: number): string {
  const lines = rustLines(raw);
  const kept = n >= lines.length ? lines : n <= 0 ? [] : lines.slice(lines.length - n);
  return stripAnsi(kept.join('\n'));
}

/** The text a rule with this region matches against. */
export function regionText(region: Region, snap: Snapshot): string {
  switch (region.kind) {
    case 'title':
      return stripAnsi(snap.title);
    case 'tail_lines':
      return lastLines(snap.tail, region.n);
    case 'visible': {
      // An unknown or zero pane height means "the whole capture", never "nothing".
      const h = snap.visibleHeight;
      return h !== null && h > 0 ? lastLines(snap.tail, h) : lastLines(snap.tail, Number.POSITIVE_INFINITY);
    }
  }
}
