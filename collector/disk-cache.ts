// Files under $XDG_CACHE_HOME/tma that spare a short-lived command work it did before (validated
// manifests, a validated config). Each family keeps one entry, named by a hash of everything the
// entry depends on: any change of input is a different name, so an entry is never stale, only
// unused. Reading and writing are best effort; a miss costs the command the validation.

import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';

export type Env = Record<string, string | undefined>;

export function cacheDir(env: Env): string {
  const xdg = env['XDG_CACHE_HOME'];
  return join(xdg && isAbsolute(xdg) ? xdg : join(env['HOME'] || homedir(), '.cache'), 'tma');
}

/** `<family>-<16 hex>.json`, from the parts in order. Hashed natively: a hash written in JS runs
 * cold in a short-lived process and cost more than reading the entry. */
export function entryName(family: string, parts: readonly string[]): string {
  const h = createHash('sha256');
  for (const p of parts) h.update(`\u0001${p}`);
  return `${family}-${h.digest('hex').slice(0, 16)}.json`;
}

export function readEntry(dir: string, name: string): string | null {
  try {
    return readFileSync(join(dir, name), 'utf8');
  } catch {
    return null;
  }
}

/** Written atomically; the family's other entries are removed. */
export function writeEntry(dir: string, family: string, name: string, text: string): void {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const tmp = join(dir, `${name}.${process.pid}.tmp`);
    writeFileSync(tmp, text, { mode: 0o600 });
    renameSync(tmp, join(dir, name));
    const same = new RegExp(`^${family}-[0-9a-f]{16}\\.json$`);
    for (const old of readdirSync(dir)) {
      if (old !== name && same.test(old)) unlinkSync(join(dir, old));
    }
  } catch {
    // read-only or full disk: fine
  }
}
