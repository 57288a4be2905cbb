// What a prompt asks, as one line a person can read before answering it. Pure. Agent-printed
// text: control characters (escapes included) are stripped and the length is bounded.

import { stripAnsi } from './ansi.js';

export const SUMMARY_MAX = 200;
/** A pending call (the tool input as JSON) is kept whole up to this size, else cut. */
export const CALL_MAX = 2000;

// C0, DEL and C1 controls, plus the Unicode line and paragraph separators.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;

function clip(s: string, max: number): string {
  const chars = [...s];
  return chars.length <= max ? s : chars.slice(0, max - 1).join('') + '…';
}

/** One line, no control characters, at most 200 characters; null when nothing is left. */
export function oneLineSummary(raw: string | null | undefined): string | null {
  if (raw === null || raw === undefined) return null;
  const flat = stripAnsi(raw)
    .replace(/[\r\n\t]+/g, ' ')
    .replace(CONTROL, '')
    .replace(/\s+/g, ' ')
    .trim();
  return flat === '' ? null : clip(flat, SUMMARY_MAX);
}

/** A pending call for a pane option: control characters stripped, bounded; null when empty. */
export function cleanCall(raw: string | null | undefined): string | null {
  if (raw === null || raw === undefined) return null;
  const flat = raw.replace(CONTROL, '').trim();
  return flat === '' ? null : clip(flat, CALL_MAX);
}

/** A tool name: a short identifier-like token, else null. */
export function cleanTool(raw: unknown): string | null {
  if (typeof raw !== 'string') return null;
  const t = raw.trim();
  return /^[A-Za-z0-9_.:\-/ ]{1,100}$/.test(t) ? t : null;
}
