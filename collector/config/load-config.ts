// Where config.toml lives and reading it: --config, then TMA_CONFIG, then the XDG location.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmaConfigDir } from '../../shared/config-dir.js';
import { ConfigError, DEFAULT_CONFIG, type Config } from './config-types.js';

export function configPath(flag: string | undefined, env: NodeJS.ProcessEnv): { path: string; explicit: boolean } {
  if (flag) return { path: flag, explicit: true };
  if (env.TMA_CONFIG) return { path: env.TMA_CONFIG, explicit: true };
  return { path: join(tmaConfigDir(env), 'config.toml'), explicit: false };
}

/** An absent file means defaults (and no validator loaded); an unreadable or invalid one is an error. */
export async function loadConfig(flag: string | undefined, env: NodeJS.ProcessEnv): Promise<Config> {
  const { path } = configPath(flag, env);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return DEFAULT_CONFIG;
    throw new ConfigError(`${path}: cannot read: ${(e as Error).message}`);
  }
  const { parseConfigCached } = await import('./config-cache.js');
  return parseConfigCached(path, text, env);
}
