// The files `tma hub` and `tma hub token` keep in tma's config folder (shared/config-dir.ts):
// one module both verbs and the fleet client read, so none of them imports another verb.

import { join } from 'node:path';
import { tmaConfigDir } from '../shared/config-dir.js';

/** hub.toml when `--config` names none. */
export function defaultHubConfigPath(env: NodeJS.ProcessEnv): string {
  return join(tmaConfigDir(env), 'hub.toml');
}

/** Where `tma hub token` writes when `--dir` names no folder. */
export function defaultTokenDir(env: NodeJS.ProcessEnv): string {
  return join(tmaConfigDir(env), 'tokens');
}

/** The token file `tma hub` writes when it runs without a hub.toml. */
export function defaultTokenFile(env: NodeJS.ProcessEnv): string {
  return join(tmaConfigDir(env), 'hub.token');
}
