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

/** A row that shows nothing: empty, or only escapes and whitespace once they are removed. */
function isBlankRow(line: string): boolean {
  return stripAnsi(line).trim() === '';
}

/**
 * The capture's lines without the blank rows below the last painted one. tmux prints every row of
 * the pane, so an inline UI that has not filled a tall pane yet (a fresh session) sits above a run
 * of empty rows; counted, they push the prompt or composer out of a `tail_lines(N)` window.
 */
function paintedLines(raw: string): string[] {
  const lines = rustLines(raw);
  let end = lines.length;
  while (end > 0 && isBlankRow(lines[end - 1]!)) end--;
  return end === lines.length ? lines : lines.slice(0, end);
}

/** The last `n` lines, escapes removed after the join (n <= 0 keeps none). */
function lastLines(lines: string[], n: number): string {
  const kept = n >= lines.length ? lines : n <= 0 ? [] : lines.slice(lines.length - n);
  return stripAnsi(kept.join('\n'));
}

/** The text a rule with this region matches against. */
export function regionText(region: Region, snap: Snapshot): string {
  switch (region.kind) {
    case 'title':
      return stripAnsi(snap.title);
    case 'tail_lines':
      // Counted from the last painted row, where the agent's own bottom edge is.
      return lastLines(paintedLines(snap.tail), region.n);
    case 'visible': {
      // An unknown or zero pane height means "the whole capture", never "nothing".
      const h = snap.visibleHeight;
      // The screen as shown, blank rows included: trimming them would pull history into view.
      const lines = rustLines(snap.tail);
      return lastLines(lines, h !== null && h > 0 ? h : Number.POSITIVE_INFINITY);
    }
  }
}
