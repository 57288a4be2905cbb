// The hub's one config file as `tma` itself edits it, and the running hub's pid file beside it.
// `tma hub token` adds its entry here and signals the hub that wrote the pid file, so a hub started
// with no config grows into a fleet without a restart. The pid file holds the pid and the URL the
// hub listens on (the collector command is printed with the address that really answers).

import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { expandHome, hostName, HubConfigError, parseHubConfig } from '../../hub/config/config.js';
import { UsageError } from '../args.js';
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
    '# hub.toml for `tma hub`, created by `tma hub token|tls|pair`. Edit freely; the hub re-reads it on',
    '# SIGHUP (and those commands send one). Every key: deploy/hub.example.toml.',
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

/** Make the hub that wrote the pid file re-read hub.toml; a failure is said, not fatal. */
export function signalReload(running: RunningHub): void {
  try {
    process.kill(running.pid, 'SIGHUP');
  } catch (e) {
    process.stderr.write(`tma: could not signal the hub (pid ${running.pid}): ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}\n`);
  }
}

/** A new token file, ours alone (0600); refused when it exists unless `force`. */
export function writeToken(dir: string, file: string, token: string, force: boolean): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  try {
    writeFileSync(file, `${token}\n`, { mode: 0o600, flag: force ? 'w' : 'wx' });
    // A replaced file keeps the mode it had: make sure it is ours alone.
    chmodSync(file, 0o600);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') throw new ExitError(`${file} already exists; pass --force to replace its token`, 2);
    throw new ExitError(`cannot write ${file}: ${code ?? (e as Error).message}`, 1);
  }
}

/** Names become file names here and host names in hub.toml: the hub's own rule, and never `.`/`..`. */
export function checkName(name: string, what: string): string {
  const r = hostName.safeParse(name);
  if (!r.success) throw new UsageError(`${what} "${name}": ${r.error.issues[0]!.message}`);
  if (/^\.+$/.test(name)) throw new UsageError(`${what} "${name}" is not a usable name`);
  return name;
}

const HEADER = /^\s*\[/;
const COMMENT = /^\s*#/;

/**
 * The text without the `[[client]]` entry named `name`: its lines and the comments written just
 * above it (`tma hub token`/`pair` put them there); everything else byte for
 * byte. Checked by parsing: the result must read as the old file less that one entry.
 */
export function removeClientEntry(configPath: string, text: string, name: string): string {
  const lines = text.split('\n');
  const headers = lines.flatMap((l, i) => (HEADER.test(l) ? [i] : []));
  const commentsAbove = (i: number) => {
    let j = i;
    while (j > 0 && COMMENT.test(lines[j - 1]!)) j--;
    return j;
  };
  for (const [k, at] of headers.entries()) {
    if (lines[at]!.trim() !== '[[client]]') continue;
    const next = headers[k + 1] ?? lines.length;
    const end = next < lines.length ? commentsAbove(next) : next;
    let block: Record<string, unknown>;
    try {
      block = parseToml(lines.slice(at, next).join('\n'));
    } catch {
      continue;
    }
    if ((block.client as { name?: unknown }[] | undefined)?.[0]?.name !== name) continue;
    const start = commentsAbove(at);
    const out = [...lines.slice(0, start), ...lines.slice(Math.max(end, at + 1))].join('\n');
    const expected: Record<string, unknown> = parseToml(text);
    const left = (expected.client as { name?: unknown }[]).filter((c) => c.name !== name);
    if (left.length) expected.client = left;
    else delete expected.client;
    let got: unknown = null;
    try {
      got = parseToml(out);
    } catch {
      // reported below
    }
    if (JSON.stringify(got) === JSON.stringify(expected)) return out;
    break;
  }
  throw new ExitError(`could not take client ${name} out of ${configPath} on its own; remove its [[client]] entry by hand and reload the hub`, 2);
}
