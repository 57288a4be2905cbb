// How many notify frames a host may send: a token bucket per host (one live link per host, so
// per link; a redial does not refill it). A collector rings once per episode of a pane and resends
// what is unacknowledged every 15 s, so a real host stays far below it. A frame over the budget is
// not acknowledged (the collector keeps it and offers it again later) and costs nothing more: it
// is refused before it is decoded where the link can tell, and the reason goes back in one error
// frame per host per second, not one per frame.

import type { FrameError } from '../../shared/protocol.js';

export const NOTIFY_BURST = 500;
export const NOTIFY_PER_SEC = 10;
/** At most one refusal frame per host this often; the others are only counted. */
export const REFUSAL_FRAME_EVERY_MS = 1000;

/** null: admitted. Otherwise refused; `frame` is the error to send back, when one is due. */
export type Admission = null | { frame: FrameError | null };

export class FrameBudget {
  private readonly buckets = new Map<string, { tokens: number; at: number; toldAt: number }>();

  constructor(
    readonly burst = NOTIFY_BURST,
    readonly perSec = NOTIFY_PER_SEC,
    private readonly clock: () => number = Date.now,
  ) {}

  /** Spend one frame of `host`'s budget. */
  take(host: string): Admission {
    const now = this.clock();
    let b = this.buckets.get(host);
    if (!b) this.buckets.set(host, (b = { tokens: this.burst, at: now, toldAt: -Infinity }));
    // A clock stepped back refills nothing and takes nothing away.
    b.tokens = Math.min(this.burst, b.tokens + (Math.max(0, now - b.at) * this.perSec) / 1000);
    b.at = now;
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return null;
    }
    if (now >= b.toldAt && now - b.toldAt < REFUSAL_FRAME_EVERY_MS) return { frame: null };
    b.toldAt = now;
    const message = `notify frames from ${host} exceed ${this.burst} at once or ${this.perSec}/s; not acknowledged, send them again later`;
    return { frame: { type: 'error', code: 'rate-limited', message } };
  }
}
