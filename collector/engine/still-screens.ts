// Which stored capture claims a watching engine saw on screen, and when each screen next painted:
// the memory behind `withStillEvidence` (collector/core/still-evidence.ts). Without an output watch
// every look rewrites the evidence time, so nothing is remembered then.

import { withStillEvidence, type SeenClaim } from '../core/still-evidence.js';
import type { StampedState, Verdict } from '../core/types.js';

export class StillScreens {
  private readonly seen = new Map<string, SeenClaim>();

  /** The pane painted at `at`: the claim its last look saw stood on screen until then. */
  painted(pane: string, at: number): void {
    const s = this.seen.get(pane);
    if (s && s.paintedAt === null) s.paintedAt = at;
  }

  /** The prior stamp for the fold, its evidence time carried up to when the screen last showed it. */
  prior(pane: string, prev: StampedState | null, now: number, watching: boolean): StampedState | null {
    return watching ? withStillEvidence(prev, this.seen.get(pane) ?? null, now) : prev;
  }

  /**
   * After a look at `now`: a screen that published the claim the store now holds was seen showing
   * it. A hold means the screen no longer shows the claim, so it was last seen no later than now and
   * later paints must not carry it further (else a hold over an unpainted screen would renew its own
   * dwell forever). Anything else (a hook's claim, no stamp, an unwatched look) forgets the pane.
   */
  looked(pane: string, v: Verdict, stored: StampedState | null, watching: boolean, now: number): void {
    if (v.action === 'hold' && watching) {
      this.painted(pane, now);
      return;
    }
    if (watching && stored !== null && v.winning.source === 'capture' && stored.source === 'capture' && stored.state === v.state) {
      this.seen.set(pane, { state: stored.state, evidenceAt: stored.evidenceAt, paintedAt: null });
    } else this.seen.delete(pane);
  }

  keepOnly(panes: ReadonlySet<string>): void {
    for (const p of this.seen.keys()) if (!panes.has(p)) this.seen.delete(p);
  }
}
