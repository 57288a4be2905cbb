// The files `tma hub` and `tma hub token` keep in tma's config folder (shared/config-dir.ts):
// one module both verbs and the fleet client read, so none of them imports another verb.

import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
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

/** The zero-config token, when `tma hub` already made one. */
export function readLocalToken(env: NodeJS.ProcessEnv): { token: string; file: string } | null {
  const file = defaultTokenFile(env);
  if (!existsSync(file)) return null;
  const token = readFileSync(file, 'utf8').trim();
  return token ? { token, file } : null;
}

/** The token a zero-config hub accepts, created once (0600) and reused. */
export function localToken(env: NodeJS.ProcessEnv): { token: string; file: string } {
  const file = defaultTokenFile(env);
  const known = readLocalToken(env);
  if (known) return known;
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const token = randomBytes(24).toString('hex');
  writeFileSync(file, `${token}\n`, { mode: 0o600 });
  return { token, file };
}

/** The hub's state folder (journals, last-seen), apart from config: `$XDG_STATE_HOME/tma`. */
export function hubStateDir(env: NodeJS.ProcessEnv): string {
  return join(env.XDG_STATE_HOME || join(env.HOME || homedir(), '.local', 'state'), 'tma');
}

/** `tma hub add-host`'s enrolment code files (named by each code's SHA-256), which the hub redeems. */
export function enrolDir(env: NodeJS.ProcessEnv): string {
  return join(hubStateDir(env), 'enrol');
}

/** When each client token was last used: the hub writes it, `tma hub clients` reads it. */
export function clientsSeenPath(env: NodeJS.ProcessEnv): string {
  return join(hubStateDir(env), 'hub-clients.json');
}
