// Files under $XDG_CACHE_HOME/tma that spare a short-lived command work it did before (validated
// manifests, a validated config). Each family keeps one entry, named by a hash of everything the
// entry depends on: any change of input is a different name, so an entry is never stale, only
// unused. Reading and writing are best effort; a miss costs the command the validation.

import { createHash } from 'node:crypto';

export { cacheDir, readEntry, writeEntry, type Env } from './disk-cache-files.js';

/** `<family>-<16 hex>.json`, from the parts in order. Hashed natively: a hash written in JS runs
 * cold in a short-lived process and cost more than reading the entry. */
export function entryName(family: string, parts: readonly string[]): string {
  const h = createHash('sha256');
  for (const p of parts) h.update(`\u0001${p}`);
  return `${family}-${h.digest('hex').slice(0, 16)}.json`;
}
