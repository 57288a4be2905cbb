// What a long-lived engine remembers about each pane it last looked at (captured and folded), so
// a pane whose screen cannot have changed is not captured again. This only holds while something
// tells the engine about output (the %output watch marks painted panes): without it, a quiet
// listing says nothing about the screen and every pane is looked at as the stamps' age dictates.

import type { Verdict } from '../core/types.js';
import type { PaneRecord } from './pane-list.js';

/** Every pane is looked at again at least this often, painted or not: the safety sweep. */
export const SWEEP_MS = 10_000;

/**
 * A pane found not to be an agent is looked at again this rarely unless its listing moves: an
 * agent starting there changes its foreground command or title, and paints.
 */
export const NOT_AGENT_SWEEP_MS = 60_000;

interface Look {
  /** When the engine last captured (or reused) the pane. */
  at: number;
  /** How long the look stands without a new one, painted or not. */
  sweepMs: number;
  /** The pane's listing as first read after that look; null until the next cycle reads it. */
  sig: string | null;
  /** The last verdict was a hold (dwell, a hook claim not yet decayed): time alone may change it. */
  pending: boolean;
}

/**
 * Everything the listing says about a pane except what moves with output alone: window activity
 * (output marks the pane painted instead) and the rollups (they follow the other panes).
 */
export function listingSignature(rec: PaneRecord): string {
  const { windowActivity: _a, windowSummary: _w, sessionSummary: _s, ...rest } = rec;
  return JSON.stringify(rest);
}

/**
 * Holds that only the clock can end, as the fold marks them: a working→idle dwell, a hook claim the
 * screen contradicts but that has not decayed yet. Other holds (a scrolled pane, an editor in
 * front, no evidence) end with output or a listing change, which end the quiet anyway.
 */
export function waitsOnClock(v: Pick<Verdict, 'action' | 'waitsOnClock'>): boolean {
  return v.action === 'hold' && v.waitsOnClock === true;
}

export class LookBook {
  private readonly looks = new Map<string, Look>();

  constructor(private readonly o: { sweepMs?: number; pendingMs: number }) {}

  /**
   * Whether this pane can keep its stamp without a look: looked at within the sweep, nothing in
   * its listing moved since (its options included, so a second writer's stamp is looked at), and
   * no hold waiting on the clock. The first listing after a look becomes the reference.
   */
  quiet(rec: PaneRecord, now: number): boolean {
    const l = this.looks.get(rec.paneId);
    if (!l) return false;
    if (now < l.at || now - l.at >= l.sweepMs) return false;
    if (l.pending && now - l.at >= this.o.pendingMs) return false;
    const sig = listingSignature(rec);
    if (l.sig === null) {
      l.sig = sig;
      return true;
    }
    return l.sig === sig;
  }

  looked(pane: string, now: number, pending: boolean, sweepMs = this.o.sweepMs ?? SWEEP_MS): void {
    this.looks.set(pane, { at: now, sweepMs, sig: null, pending });
  }

  /** Forget panes that are gone (or not agents any more). */
  keepOnly(panes: ReadonlySet<string>): void {
    for (const p of this.looks.keys()) if (!panes.has(p)) this.looks.delete(p);
  }

  /** Some pane's last verdict was a hold: it needs another look once the clock has moved. */
  anyPending(): boolean {
    for (const l of this.looks.values()) if (l.pending) return true;
    return false;
  }

  forget(pane: string): void {
    this.looks.delete(pane);
  }
}
