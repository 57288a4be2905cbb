// How many notify frames a host may send: a token bucket per host (one live link per host, so
// per link; a redial does not refill it). A collector rings once per episode of a pane and resends
// what is unacknowledged every 15 s, so a real host stays far below it; a flood is refused frame by
// frame at constant cost, unacknowledged, so the collector keeps those and offers them again later.

export const NOTIFY_BURST = 500;
export const NOTIFY_PER_SEC = 10;

/** The refusal a link sends back instead of an ack: an error frame, never a journal write. */
export class NotifyRefused extends Error {
  readonly frame: { type: 'error'; code: 'rate-limited'; message: string };
  constructor(readonly host: string, burst: number, perSec: number) {
    const message = `notify frames from ${host} exceed ${burst} at once or ${perSec}/s; not acknowledged, send again later`;
    super(message);
    this.frame = { type: 'error', code: 'rate-limited', message };
  }
}

export class FrameBudget {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    readonly burst = NOTIFY_BURST,
    readonly perSec = NOTIFY_PER_SEC,
    private readonly clock: () => number = Date.now,
  ) {}

  /** Spend one frame of `host`'s budget; false when it has none left. */
  take(host: string): boolean {
    const now = this.clock();
    let b = this.buckets.get(host);
    if (!b) this.buckets.set(host, (b = { tokens: this.burst, at: now }));
    // A clock stepped back refills nothing and takes nothing away.
    b.tokens = Math.min(this.burst, b.tokens + (Math.max(0, now - b.at) * this.perSec) / 1000);
    b.at = now;
    if (b.tokens < 1) return false;
    b.tokens -= 1;
    return true;
  }
}
