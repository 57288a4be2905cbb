// Log sampling for what a stranger can trigger at will (bad tokens): the first occurrence of each
// kind in a window is logged, with how many were left unsaid since; the rest only count in /metrics.

export class LogSampler {
  private readonly windows = new Map<string, { startMs: number; suppressed: number }>();

  constructor(
    private readonly windowMs = 10_000,
    private readonly clock: () => number = Date.now,
  ) {}

  /** Whether to log this occurrence of `key`; when yes, how many were suppressed before it. */
  take(key: string): { log: true; suppressed: number } | { log: false } {
    const now = this.clock();
    const w = this.windows.get(key);
    if (w && now - w.startMs < this.windowMs) {
      w.suppressed++;
      return { log: false };
    }
    const suppressed = w?.suppressed ?? 0;
    this.windows.set(key, { startMs: now, suppressed: 0 });
    // Keys come from a fixed set (endpoint × reason), but stay bounded whatever a caller passes.
    if (this.windows.size > 1000) this.windows.clear();
    return { log: true, suppressed };
  }
}
