// A config.toml that validated once is not validated again while neither its bytes nor the code
// that reads it changed: validation loads the TOML parser and the schema library, which cost a
// status bar's `tma status` more than everything else it does. The entry is keyed by the file's
// path and bytes and by the build of this code (its file's size and time), so any rebuild or
// upgrade validates afresh. A file that does not validate is never cached: its error is told
// every time.

import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { cacheDir, writeEntry, type Env } from '../disk-cache-files.js';
import { cachedConfig, configEntryName, fileStamp } from './config-cache-key.js';
import type { Config } from './config-types.js';

/** The quick status path (cli/status-fast.ts) stamps the bundle chunk holding this code the same way. */
function buildStamp(): string {
  return fileStamp(fileURLToPath(import.meta.url));
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
