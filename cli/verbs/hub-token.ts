// `tma hub token --host NAME | --client NAME --role viewer|operator`: a new random token in a new
// 0600 file, its entry added to the hub's config file (created on first use) and the running hub
// told to reload it; `--print` only prints. Everything printed is valid TOML (the guidance is
// comments), so the output can also be pasted, or appended, into a hub.toml by hand.

import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { DEFAULT_LISTEN, expandHome, loadHubConfig, type Role } from '../../hub/config/config.js';
import { UsageError, type Parsed } from '../args.js';
import type { HUB } from '../verb-flags.js';
import { ExitError } from '../local.js';
import { defaultHubConfigPath, defaultTokenDir, localToken } from '../hub-files.js';
import {
  appendEntry,
  checkName,
  listedTokenFile,
  newHubToml,
  runningHub,
  signalReload,
  writeConfigAtomically,
  writeToken,
  type RunningHub,
} from './hub-config-file.js';

export { checkName };

const q = (s: string) => JSON.stringify(s);

const HAND_ADD = '# add this entry to hub.toml, then reload the hub: systemctl --user reload tma-hub (or kill -HUP its pid)';

/** `added`: the line saying where the entry went and whether a hub took it, instead of what to do by hand. */
/** `ca`: the hub's own certificate (`[tls]`), which the collector must trust. */
export function hostEntryText(name: string, file: string, hubUrl: string, note: string, added?: string, ca?: string): string {
  return [
    `# token for host ${name} written to ${file} (mode 0600)`,
    added ?? HAND_ADD,
    '[[collector]]',
    `host = ${q(name)}`,
    `token_file = ${q(file)}`,
    `# on ${name}, with the token file copied to the same path (mode 0600)${ca ? ' and the hub certificate too' : ''}, run:`,
    `#   tma collector --hub ${hubUrl}${ca ? ` --hub-ca ${ca}` : ''} --token-file ${file} --host-name ${name}`,
    ...(note ? [`# ${note}`] : []),
    '',
  ].join('\n');
}

export function clientEntryText(name: string, role: Role, file: string, added?: string): string {
  return [
    `# token for client ${name} (${role}) written to ${file} (mode 0600)`,
    added ?? HAND_ADD,
    '[[client]]',
    `name = ${q(name)}`,
    `token_file = ${q(file)}`,
    `role = ${q(role)}`,
    `# hand the file to ${name}: tma --hub URL --token-file FILE ls, or the fleet page's sign-in`,
    '',
  ].join('\n');
}

const LOOPBACK = /^(127\.|\[?::1\]?:|localhost:)/;

/**
 * The URL a collector dials: --hub as given (http→ws); else hub.toml's public_url; else the running
 * hub's own address (this machine's name when it listens on every address); else this machine at
 * the configured port.
 */
function collectorUrl(p: Parsed, env: NodeJS.ProcessEnv, running: RunningHub | null = null): { url: string; note: string; ca?: string } {
  let listen = DEFAULT_LISTEN;
  let publicUrl: string | undefined;
  let ca: string | undefined;
  const file = p.globals.config ?? defaultHubConfigPath(env);
  try {
    if (existsSync(file)) {
      const c = loadHubConfig(file);
      listen = `${c.listen.host}:${c.listen.port}`;
      publicUrl = c.publicUrl;
      ca = c.tls?.certFile;
    }
  } catch {
    // A config that does not load yet is no reason not to mint a token; the port stays the default.
  }
  const given = p.globals.hub;
  if (given) {
    const url = given.replace(/^http(s?):\/\//, 'ws$1://');
    if (!/^wss?:\/\/[^/\s]+/.test(url)) throw new UsageError(`--hub "${given}": expected ws://HOST:PORT`);
    return { url, note: '', ...(ca && url.startsWith('wss:') ? { ca } : {}) };
  }
  // public_url is where people reach the hub; a collector goes the same way (a proxy's certificate is its own).
  if (publicUrl) return { url: publicUrl.replace(/^http(s?):\/\//, 'ws$1://'), note: '' };
  // The hub's own certificate: the collector trusts it with --hub-ca.
  if (ca) return { ...hubOwnUrl(listen, running, 'wss'), ca };
  return hubOwnUrl(listen, running, 'ws');
}

/** The running hub's own address (this machine's name when it listens on every address), else the configured port here. */
function hubOwnUrl(listen: string, running: RunningHub | null, scheme: 'ws' | 'wss'): { url: string; note: string } {
  if (running) {
    const at = running.url.replace(/^https?:\/\//, '');
    const url = `${running.url.startsWith('https:') ? 'wss' : scheme}://${at.replace(/^(0\.0\.0\.0|\[::\])(?=:)/, hostname())}`;
    const loopback = LOOPBACK.test(at);
    return { url, note: loopback ? `the hub listens on ${at}, loopback only: other hosts need a listen address they can reach (or a proxy)` : '' };
  }
  const port = listen.slice(listen.lastIndexOf(':') + 1);
  const loopback = LOOPBACK.test(listen);
  return {
    url: `${scheme}://${hostname()}:${port}`,
    note: loopback ? `the hub listens on ${listen}, loopback only: other hosts need a listen address they can reach (or a proxy)` : '',
  };
}

export async function main(p: Parsed<typeof HUB>): Promise<number> {
  const env = process.env;
  if (p.positionals.length > 1) throw new UsageError(`unexpected argument "${p.positionals[1]}"`);
  const stray = (['name', 'ttl', 'json', 'show'] as const).find((k) => p.opts[k] !== undefined);
  if (stray) throw new UsageError(`--${stray} is not a flag of \`tma hub token\``);
  const host = p.opts.host;
  const client = p.opts.client;
  const role = p.opts.role;
  if ((host === undefined) === (client === undefined)) throw new UsageError('tma hub token needs --host NAME or --client NAME --role viewer|operator');
  if (host !== undefined && role !== undefined) throw new UsageError('--role is for --client; a host token only publishes');
  if (client !== undefined && role !== 'viewer' && role !== 'operator') throw new UsageError('--client needs --role viewer or --role operator');
  const name = checkName((host ?? client)!, host !== undefined ? 'host name' : 'client name');

  const dir = resolve(expandHome(p.opts.dir ?? defaultTokenDir(env)));
  const file = join(dir, name);
  const force = p.opts.force === true;
  if (existsSync(file) && !force) throw new ExitError(`${file} already exists; pass --force to replace its token`, 2);
  const token = randomBytes(32).toString('hex');

  if (p.opts.print === true) {
    writeToken(dir, file, token, force);
    const hub = host !== undefined ? collectorUrl(p, env) : null;
    process.stdout.write(hub ? hostEntryText(name, file, hub.url, hub.note, undefined, hub.ca) : clientEntryText(name, role as Role, file));
    return 0;
  }

  process.stdout.write(addEntry(p, env, { host, role, name, dir, file, token, force }));
  return 0;
}

interface NewEntry {
  host: string | undefined;
  role: string | undefined;
  name: string;
  dir: string;
  file: string;
  token: string;
  force: boolean;
}

/**
 * Writes the token file and its entry into hub.toml (created on first use), tells the running hub
 * to reload, and returns the entry as printed. `tma hub add-host` mints its host this way too.
 */
export function addEntry(p: Parsed<typeof HUB>, env: NodeJS.ProcessEnv, o: NewEntry): string {
  const { host, role, name, dir, file, token, force } = o;
  // The config file, created on first use with the zero-config hub's token as an operator client.
  const configPath = p.globals.config ?? defaultHubConfigPath(env);
  const created = !existsSync(configPath);
  const base = created ? newHubToml(localToken(env).file) : readFileSync(configPath, 'utf8');
  const listed = listedTokenFile(configPath, base, host !== undefined ? 'collector' : 'client', name);
  if (listed !== null && !(force && listed === file)) {
    throw new ExitError(
      `${host !== undefined ? 'host' : 'client'} ${name} is already in ${configPath}${listed ? ` (token_file ${listed})` : ''}; edit that entry, or pass --force with the same --dir to replace its token`,
      2,
    );
  }
  const running = runningHub(configPath);
  const hub = host !== undefined ? collectorUrl(p, env, running) : null;
  const said = running ? `the running hub (pid ${running.pid}) was told to reload it` : 'no hub runs for it now; `tma hub` reads it when it starts';
  const added = `# ${listed !== null ? 'already in' : 'added to'} ${configPath}; ${said}`;
  const entry = hub ? hostEntryText(name, file, hub.url, hub.note, added, hub.ca) : clientEntryText(name, role as Role, file, added);
  // Checked as the hub will read it, with the new token in place, before anything is written.
  const text = listed !== null ? null : appendEntry(configPath, base, entry, (path) => (path === file ? token : readFileSync(path, 'utf8')));
  writeToken(dir, file, token, force);
  if (text !== null) writeConfigAtomically(configPath, text);
  if (running) signalReload(running);
  return entry;
}
