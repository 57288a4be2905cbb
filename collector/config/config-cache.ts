// A config.toml that validated once is not validated again while neither its bytes nor the code
// that reads it changed: validation loads the TOML parser and the schema library, which cost a
// status bar's `tma status` more than everything else it does. The entry is keyed by the file's
// path and bytes and by the build of this code (its file's size and time), so any rebuild or
// upgrade validates afresh. A file that does not validate is never cached: its error is told
// every time.

import { statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { cacheDir, entryName, readEntry, writeEntry, type Env } from '../disk-cache.js';
import type { Config } from './config-types.js';

const FORMAT = 1;

/** size:mtime of a file; the quick status path (cli/status-fast.ts) stamps this module's bundle chunk the same way. */
export function fileStamp(path: string): string {
  try {
    const s = statSync(path);
    return `${s.size}:${s.mtimeMs}`;
  } catch {
    return 'unknown';
  }
}

function buildStamp(): string {
  return fileStamp(fileURLToPath(import.meta.url));
}

/** The entry's name for this file under the build whose config code has `stamp` (size:mtime of its file). */
export function configEntryName(stamp: string, path: string, text: string): string {
  return entryName('config', [`v${FORMAT}`, stamp, path, text]);
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

export async function parseConfigCached(path: string, text: string, env: Env): Promise<Config> {
  const dir = cacheDir(env);
  const name = configEntryName(buildStamp(), path, text);
  const hit = cachedConfig(env, name);
  if (hit !== null) return hit;
  const { parseConfig } = await import('./config-schema.js');
  const config = parseConfig(path, text);
  // Only what survives JSON unchanged is kept (no undefined, Infinity or class instances).
  const json = JSON.stringify(config);
  if (isDeepStrictEqual(JSON.parse(json), config)) writeEntry(dir, 'config', name, json);
  return config;
}
