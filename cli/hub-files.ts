// The files `tma hub` and `tma hub token` keep in tma's config folder (shared/config-dir.ts):
// one module both verbs and the fleet client read, so none of them imports another verb.

import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { HubConfigError, type HubConfig } from '../hub/config/config.js';
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

/**
 * The fleet secret a hub on NATS keys links, requests and rows with, when hub.toml names no
 * `fleet_key_file`: `fleet.key` beside hub.toml, made (0600, 32 random bytes as hex) on first use,
 * so `tma hub --nats …` keeps working with no setup. Every other hub of the fleet needs a copy.
 */
export function withDefaultFleetKey(config: HubConfig, configPath: string, say: (line: string) => void): HubConfig {
  if (!config.nats || config.nats.fleetKey) return config;
  const file = join(dirname(configPath), 'fleet.key');
  if (!existsSync(file)) {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    try {
      writeFileSync(file, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
      say(`nats: no fleet_key_file in hub.toml: made the fleet secret ${file} (0600); copy it to every other hub of this fleet (or set fleet_key_file)`);
    } catch (e) {
      // A second hub starting beside this one made it first: both read that one.
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw new HubConfigError(`${file}: cannot write: ${(e as Error).message}`);
    }
  }
  const text = readFileSync(file, 'utf8').trim();
  if (text.length < 32) throw new HubConfigError(`${file}: holds ${text.length} characters, needs at least 32 (openssl rand -hex 32)`);
  return { ...config, nats: { ...config.nats, fleetKey: Buffer.from(text, 'utf8') } };
}
