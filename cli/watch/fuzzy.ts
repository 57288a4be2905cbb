// The filter both views share. Each word typed must appear, its letters in order, within one of
// what the row shows (agent, host, where, pane, repo, branch, state, what is asked); case does
// not matter. Letters spread over several fields would match nearly every row.

import type { WatchRow } from './rows.js';

export function fields(r: WatchRow): string[] {
  return [r.agent, r.host, r.locator, r.pane, r.repo ?? '', r.branch ?? '', r.klass, r.pending_summary ?? ''].map((f) => f.toLowerCase());
}

/** A score for one word in one text (adjacent hits count more), or null when it does not match. */
export function fuzzyScore(word: string, text: string): number | null {
  let at = 0;
  let score = 0;
  let last = -2;
  for (const ch of word.toLowerCase()) {
    const i = text.indexOf(ch, at);
    if (i < 0) return null;
    score += i === last + 1 ? 3 : 1;
    last = i;
    at = i + 1;
  }
  return score;
}

export function matches(query: string, r: WatchRow): boolean {
  const words = query.trim().split(/\s+/).filter(Boolean);
  if (words.length === 0) return true;
  const fs = fields(r);
  return words.every((w) => fs.some((f) => fuzzyScore(w, f) !== null));
}
