// A screen claim outlives the look that read it while the screen stays still. A collector that
// watches output does not rewrite a stamp that would change nothing, so a stored capture claim
// keeps the evidence time of the look that first wrote it, however long the screen then stood
// unchanged. The working→idle dwell counts from the last moment working was on screen; for a still
// screen that moment is when it next painted, which only the watching engine knows.

import type { StampedState, State } from './types.js';

/** What a watching engine knows about a stored capture claim it saw on screen. */
export interface SeenClaim {
  /** The stored claim as the engine left it: a stamp that no longer matches is someone else's. */
  state: State;
  evidenceAt: number;
  /** The first paint after the latest look whose screen showed this claim (null: not painted since, so the screen still shows it). */
  paintedAt: number | null;
}

/**
 * The prior stamp the fold should reason against: a stored capture claim still shown on a screen
 * that has not painted since counts as seen now; one whose screen painted counts as seen until that
 * paint. Anything else (hook claims, stamps another writer changed, nothing seen) is left as stored.
 */
export function withStillEvidence(prev: StampedState | null, seen: SeenClaim | null, now: number): StampedState | null {
  if (prev === null || seen === null) return prev;
  if (prev.source !== 'capture' || prev.state !== seen.state || prev.evidenceAt !== seen.evidenceAt) return prev;
  const until = Math.min(seen.paintedAt ?? now, now);
  return until > prev.evidenceAt ? { ...prev, evidenceAt: until } : prev;
}
