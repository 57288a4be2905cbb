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

function buildStamp(): string {
  try {
    const s = statSync(fileURLToPath(import.meta.url));
    return `${s.size}:${s.mtimeMs}`;
  } catch {
    return 'unknown';
  }
}

export async function parseConfigCached(path: string, text: string, env: Env): Promise<Config> {
  const dir = cacheDir(env);
  const name = entryName('config', [`v${FORMAT}`, buildStamp(), path, text]);
  const hit = readEntry(dir, name);
  if (hit !== null) {
    try {
      return JSON.parse(hit) as Config;
    } catch {
      // a torn or foreign entry: validate
    }
  }
  const { parseConfig } = await import('./config-schema.js');
  const config = parseConfig(path, text);
  // Only what survives JSON unchanged is kept (no undefined, Infinity or class instances).
  const json = JSON.stringify(config);
  if (isDeepStrictEqual(JSON.parse(json), config)) writeEntry(dir, 'config', name, json);
  return config;
}
