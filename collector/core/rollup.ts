// The window and session rollups: per-state counts in a fixed, human-first order.

import type { State } from '../../shared/tokens.js';

const ROLLUP_ORDER: readonly State[] = ['blocked', 'working', 'idle', 'unknown'];

/** `blocked:1 working:2`; zero counts are left out and no agents at all is '' (an unset). */
export function summaryOf(states: readonly State[]): string {
  const counts = new Map<State, number>();
  for (const s of states) counts.set(s, (counts.get(s) ?? 0) + 1);
  return ROLLUP_ORDER.flatMap((s) => {
    const n = counts.get(s) ?? 0;
    return n === 0 ? [] : [`${s}:${n}`];
  }).join(' ');
}
