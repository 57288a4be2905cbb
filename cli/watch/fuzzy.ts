// The filter both views share: every typed character must appear, in order, in what the row
// shows (agent, host, where, repo, branch, state, what is asked); case does not matter.

import type { WatchRow } from './rows.js';

export function haystack(r: WatchRow): string {
  return [r.agent, r.host, r.locator, r.pane, r.repo ?? '', r.branch ?? '', r.klass, r.pending_summary ?? ''].join(' ').toLowerCase();
}

/** A score (higher is closer: adjacent hits count) or null when the query does not match. */
export function fuzzyScore(query: string, text: string): number | null {
  const q = query.toLowerCase().replace(/\s+/g, '');
  if (q === '') return 0;
  let at = 0;
  let score = 0;
  let last = -2;
  for (const ch of q) {
    const i = text.indexOf(ch, at);
    if (i < 0) return null;
    score += i === last + 1 ? 3 : 1;
    last = i;
    at = i + 1;
  }
  return score;
}

export const matches = (query: string, r: WatchRow) => fuzzyScore(query, haystack(r)) !== null;
