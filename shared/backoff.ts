// Reconnect delays for every link, whichever side dials (a collector its hub, a hub its ssh
// hosts): capped exponential with full jitter, so peers that dropped together do not all come
// back in the same instant.

export interface BackoffPolicy {
  baseMs: number;
  capMs: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = { baseMs: 500, capMs: 30_000 };

/** Delay before reconnect attempt `attempt` (0-based): uniform in [0, min(cap, base·2^attempt)). */
export function backoffDelay(attempt: number, policy: BackoffPolicy, random: () => number): number {
  const ceiling = Math.min(policy.capMs, policy.baseMs * 2 ** Math.min(attempt, 30));
  return Math.floor(random() * ceiling);
}
