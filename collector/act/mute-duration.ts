// `tma mute --for DURATION`: the duration grammar and the value written to @agent_mute_until.
// Pure; lives beside the broker because both are verbs that write a pane's user-facing options.

/** "Muted until further notice": far enough out that no clock reaches it. */
export const MUTE_SENTINEL = 99_999_999_999_999;

const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

export class DurationError extends Error {}

export interface MuteDuration {
  /** Window length in ms, capped at the sentinel. */
  ms: number;
  /** How the verb echoes it back, e.g. `30m` (a bare number reads as seconds). */
  label: string;
}

/** Integer plus optional unit `s|m|h|d` (bare = seconds), surrounding blanks ignored; 0 is refused. */
export function parseMuteDuration(raw: string): MuteDuration {
  const m = /^(\d+)([smhd]?)$/.exec(raw.trim());
  if (!m) throw new DurationError(`invalid duration "${raw}" (expected e.g. 90, 30s, 15m, 2h, 1d)`);
  const unit = (m[2] || 's') as keyof typeof UNIT_MS;
  const n = BigInt(m[1]!);
  if (n === 0n) throw new DurationError('a mute duration must be greater than zero');
  const ms = n * BigInt(UNIT_MS[unit]);
  const capped = ms > BigInt(MUTE_SENTINEL) ? MUTE_SENTINEL : Number(ms);
  return { ms: capped, label: coarsestLabel(ms) };
}

/** The window in the largest unit that states it exactly: 1800 s is `30m`, 90 s stays `90s`. */
export function coarsestLabel(ms: bigint): string {
  for (const u of ['d', 'h', 'm'] as const) {
    const size = BigInt(UNIT_MS[u]);
    if (ms % size === 0n) return `${ms / size}${u}`;
  }
  return `${ms / 1000n}s`;
}

/** now + window, saturating at the sentinel. */
export function muteUntil(now: number, windowMs: number): number {
  return Math.min(now + windowMs, MUTE_SENTINEL);
}
