// Redial delays for links the hub dials itself (ssh): capped exponential with full jitter, so
// hosts that dropped together are not all redialled in the same instant. The collector keeps its
// own copy of these few lines because the hub may not import collector code.

export interface BackoffPolicy {
  baseMs: number;
  capMs: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = { baseMs: 500, capMs: 30_000 };

/** Delay before redial `attempt` (0-based): uniform in [0, min(cap, base·2^attempt)). */
export function backoffDelay(attempt: number, policy: BackoffPolicy, random: () => number): number {
  const ceiling = Math.min(policy.capMs, policy.baseMs * 2 ** Math.min(attempt, 30));
  return Math.floor(random() * ceiling);
}
