// The engine's own version and the `a[.b[.c]]` comparison that manifests gate on.

/** The reference contract this engine implements; manifests asking for more are refused. */
export const ENGINE_VERSION = '0.4.4';

export type Version = readonly [major: number, minor: number, patch: number];

// Digits only: a sign, a `v` prefix, a pre-release tag or whitespace all make a manifest's intent
// ambiguous, so they are refused rather than guessed at.
const PART = /^[0-9]+$/;

/** Parse `a`, `a.b` or `a.b.c` (absent parts read as 0). Throws on anything else. */
export function parseVersion(text: string): Version {
  const parts = text.split('.');
  if (parts.length > 3) throw new Error(`invalid version "${text}": expected a[.b[.c]]`);
  const nums = parts.map((p) => {
    if (!PART.test(p)) throw new Error(`invalid version "${text}": expected a[.b[.c]]`);
    const n = Number(p);
    if (!Number.isSafeInteger(n)) throw new Error(`invalid version "${text}": part "${p}" is too large`);
    return n;
  });
  return [nums[0] ?? 0, nums[1] ?? 0, nums[2] ?? 0];
}

/** Negative, zero or positive as `a` is older than, equal to or newer than `b`. */
export function compareVersions(a: string, b: string): number {
  const x = parseVersion(a);
  const y = parseVersion(b);
  for (let i = 0; i < 3; i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d !== 0) return d < 0 ? -1 : 1;
  }
  return 0;
}
