// Codex's rollout log: a JSONL file per session, tailed from the end. Pure: the engine reads the
// bytes and hands over the text.

import { clampPct, findNumber, findNumberAfter, findString } from './scan.js';

export interface RolloutReading {
  /** The last computable context percentage, or null when no line had one. */
  pct: number | null;
  /** The last model label named anywhere in the blob. */
  model: string | null;
}

/** One `token_count` line's percentage; null for any other line or one that does not compute. */
export function tokenCountPct(line: string): number | null {
  if (!line.includes('"token_count"')) return null;
  const window = findNumber(line, 'model_context_window');
  if (window === null || window <= 0) return null;
  // total_token_usage, not last_token_usage: the same key appears in both.
  const used = findNumberAfter(line, 'total_token_usage', 'total_tokens');
  if (used === null || used < 0) return null;
  return clampPct((used / window) * 100);
}

/**
 * Scan a blob of whole lines. The last computable token count wins; a half-written line simply
 * does not compute. No tokens are reported: Codex's running total mixes one request's input
 * with the whole session's output, which is not a context footprint.
 */
export function readRollout(blob: string): RolloutReading {
  let pct: number | null = null;
  let model: string | null = null;
  for (const line of blob.split('\n')) {
    const p = tokenCountPct(line);
    if (p !== null) pct = p;
    const m = findString(line, 'model')?.trim() ?? '';
    if (m.length >= 1 && m.length <= 64) model = m;
  }
  return { pct, model };
}

/**
 * What to keep of a window read from the middle of a file: the part before the first newline may
 * be a cut line (unless the window starts the file), and the part after the last newline may
 * still be being written.
 */
export function wholeLines(text: string, startsFile: boolean): string {
  let s = text;
  if (!startsFile) {
    const nl = s.indexOf('\n');
    s = nl < 0 ? '' : s.slice(nl + 1);
  }
  const last = s.lastIndexOf('\n');
  return last < 0 ? '' : s.slice(0, last + 1);
}

/** A rollout file for this session: `rollout-…<session>….jsonl`. */
export function isRolloutFor(fileName: string, session: string): boolean {
  return fileName.startsWith('rollout-') && fileName.endsWith('.jsonl') && session !== '' && fileName.includes(session);
}
