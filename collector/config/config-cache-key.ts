// Naming and reading a validated config.toml's cache entry (config-cache.ts writes it). Apart so
// the quick `tma status` (cli/status-fast.ts) can find the entry without the validator's module.
// The name hashes a config-sized text in JS (FNV-1a): unlike the manifests' large inputs, it costs
// less than loading node:crypto, which a status bar would otherwise pay every few seconds.

import { statSync } from 'node:fs';
import { fnv1a64 } from '../core/fnv.js';
import { cacheDir, readEntry, type Env } from '../disk-cache-files.js';
import type { Config } from './config-types.js';

const FORMAT = 2;

/** size:mtime of a file: the stamp of the build whose code reads the config. */
export function fileStamp(path: string): string {
  try {
    const s = statSync(path);
    return `${s.size}:${s.mtimeMs}`;
  } catch {
    return 'unknown';
  }
}

/** The entry's name for this file under the build whose config code has `stamp`. */
export function configEntryName(stamp: string, path: string, text: string): string {
  const key = [`v${FORMAT}`, stamp, path, text].map((p) => `\u0001${p}`).join('');
  return `config-${fnv1a64(key).toString(16).padStart(16, '0')}.json`;
}

/** The validated config kept under `name`, or null (none yet, or a torn or foreign entry). */
export function cachedConfig(env: Env, name: string): Config | null {
  const hit = readEntry(cacheDir(env), name);
  if (hit === null) return null;
  try {
    return JSON.parse(hit) as Config;
  } catch {
    return null;
  }
}
