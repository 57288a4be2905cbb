// The files of the disk cache (see disk-cache.ts): where they live, reading and writing them.
// Apart from the hashing of entry names, so that a reader that names its entry another way (the
// quick `tma status`, cli/status-fast.ts) does not load node:crypto for nothing.

import { mkdirSync, readdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';

export type Env = Record<string, string | undefined>;

export function cacheDir(env: Env): string {
  const xdg = env['XDG_CACHE_HOME'];
  return join(xdg && isAbsolute(xdg) ? xdg : join(env['HOME'] || homedir(), '.cache'), 'tma');
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
