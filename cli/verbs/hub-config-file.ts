// The hub's one config file as `tma` itself edits it, and the running hub's pid file beside it.
// `tma hub token` adds its entry here and signals the hub that wrote the pid file, so a hub started
// with no config grows into a fleet without a restart. The pid file holds the pid and the URL the
// hub listens on (the collector command is printed with the address that really answers).

import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { expandHome, HubConfigError, parseHubConfig } from '../../hub/config/config.js';
import { ExitError } from '../local.js';

/** Beside the config file: one config, one running hub. */
export const hubPidFile = (configPath: string): string => join(dirname(configPath), 'hub.pid');

export interface RunningHub {
  pid: number;
  url: string;
}

/** Written once the hub listens; removed on exit unless another hub has written it since. */
export function writePidFile(configPath: string, url: string): { remove(): void } | { error: string } {
  const file = hubPidFile(configPath);
  try {
    writeFileSync(file, `${process.pid}\n${url}\n`, { mode: 0o600 });
  } catch (e) {
    return { error: `cannot write ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}; \`tma hub token\` will not reload this hub` };
  }
  return {
    remove() {
      try {
        if (readFileSync(file, 'utf8').split('\n')[0] === String(process.pid)) rmSync(file, { force: true });
      } catch {
        // already gone
      }
    },
  };
}

/** The hub that wrote the pid file, if it still runs (a pid reused by another program is not it). */
export function runningHub(configPath: string): RunningHub | null {
  let text: string;
  try {
    text = readFileSync(hubPidFile(configPath), 'utf8');
  } catch {
    return null;
  }
  const [pidText, url] = text.split('\n');
  const pid = Number(pidText);
  if (!Number.isInteger(pid) || pid <= 0 || !url) return null;
  try {
    process.kill(pid, 0);
  } catch {
    return null;
  }
  try {
    // On Linux, make sure the pid is still a tma hub before signalling it.
    const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    if (!cmd.includes('hub')) return null;
  } catch {
    // no /proc: trust the live pid
  }
  return { pid, url };
}

/** What a new hub.toml starts with: the zero-config hub's own token, so every link it printed still works. */
export function newHubToml(localTokenFile: string): string {
  return [
    '# hub.toml for `tma hub`, created by `tma hub token`. Edit freely; the hub re-reads it on SIGHUP',
    '# (and `tma hub token` sends one). Every key: deploy/hub.example.toml.',
    '',
    "# The zero-config hub's own token, kept so the page links it printed keep working.",
    '[[client]]',
    'name = "local"',
    `token_file = ${JSON.stringify(localTokenFile)}`,
    'role = "operator"',
    '',
  ].join('\n');
}

/**
 * The file with `entry` appended, checked as the hub will read it before anything is written; the
 * old file is replaced in one rename, so a bad edit loses nothing. `read` supplies token files
 * (the new one may not exist yet).
 */
export function appendEntry(configPath: string, base: string, entry: string, read: (path: string) => string): string {
  const text = `${base}${base.endsWith('\n') || base === '' ? '' : '\n'}\n${entry}`;
  try {
    parseHubConfig(configPath, text, read);
  } catch (e) {
    if (e instanceof HubConfigError) throw new ExitError(`not adding to ${configPath}: ${e.message}`, 2);
    throw e;
  }
  return text;
}

export function writeConfigAtomically(configPath: string, text: string): void {
  const tmp = `${configPath}.tma-new-${process.pid}`;
  try {
    writeFileSync(tmp, text, { mode: 0o600 });
    renameSync(tmp, configPath);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw new ExitError(`cannot write ${configPath}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, 1);
  }
}

/**
 * The `token_file` of the entry already naming `name` in the file's text ('' for one with an inline
 * token), or null when none does. A file that does not parse names nothing here; appendEntry says why.
 */
export function listedTokenFile(configPath: string, text: string, kind: 'collector' | 'client', name: string): string | null {
  let raw: Record<string, unknown>;
  try {
    raw = parseToml(text);
  } catch {
    return null;
  }
  const list = Array.isArray(raw[kind]) ? (raw[kind] as Record<string, unknown>[]) : [];
  const hit = list.find((e) => (kind === 'collector' ? e.host : e.name) === name);
  if (!hit) return null;
  if (typeof hit.token_file !== 'string') return '';
  const named = expandHome(hit.token_file);
  return isAbsolute(named) ? named : resolve(dirname(configPath), named);
}
