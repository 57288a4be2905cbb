// `tma hub token --host NAME | --client NAME --role viewer|operator`: a new random token in a new
// 0600 file, and what to do with it. Everything printed is valid TOML (the guidance is comments),
// so the output can be pasted, or appended, into hub.toml as it stands.

import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { DEFAULT_LISTEN, expandHome, hostName, loadHubConfig, type Role } from '../../hub/config/config.js';
import { UsageError, type Parsed } from '../args.js';
import type { HUB } from '../verb-flags.js';
import { ExitError } from '../local.js';
import { defaultHubConfigPath, defaultTokenDir } from '../hub-files.js';

/** Names become file names here and host names in hub.toml: the hub's own rule, and never `.`/`..`. */
export function checkName(name: string, what: string): string {
  const r = hostName.safeParse(name);
  if (!r.success) throw new UsageError(`${what} "${name}": ${r.error.issues[0]!.message}`);
  if (/^\.+$/.test(name)) throw new UsageError(`${what} "${name}" is not a usable name`);
  return name;
}

const q = (s: string) => JSON.stringify(s);

export function hostEntryText(name: string, file: string, hubUrl: string, note: string): string {
  return [
    `# token for host ${name} written to ${file} (mode 0600)`,
    '# add this entry to hub.toml, then reload the hub: systemctl --user reload tma-hub (or kill -HUP its pid)',
    '[[collector]]',
    `host = ${q(name)}`,
    `token_file = ${q(file)}`,
    `# on ${name}, with the token file copied to the same path (mode 0600), run:`,
    `#   tma collector --hub ${hubUrl} --token-file ${file} --host-name ${name}`,
    ...(note ? [`# ${note}`] : []),
    '',
  ].join('\n');
}

export function clientEntryText(name: string, role: Role, file: string): string {
  return [
    `# token for client ${name} (${role}) written to ${file} (mode 0600)`,
    '# add this entry to hub.toml, then reload the hub: systemctl --user reload tma-hub (or kill -HUP its pid)',
    '[[client]]',
    `name = ${q(name)}`,
    `token_file = ${q(file)}`,
    `role = ${q(role)}`,
    `# hand the file to ${name}: tma --hub URL --token-file FILE ls, or the fleet page's sign-in`,
    '',
  ].join('\n');
}

/** The URL a collector dials: --hub as given (http→ws), else this machine at the configured port. */
function collectorUrl(p: Parsed, env: NodeJS.ProcessEnv): { url: string; note: string } {
  const given = p.globals.hub;
  if (given) {
    const url = given.replace(/^http(s?):\/\//, 'ws$1://');
    if (!/^wss?:\/\/[^/\s]+/.test(url)) throw new UsageError(`--hub "${given}": expected ws://HOST:PORT`);
    return { url, note: '' };
  }
  let listen = DEFAULT_LISTEN;
  const file = p.globals.config ?? defaultHubConfigPath(env);
  try {
    if (existsSync(file)) {
      const c = loadHubConfig(file);
      listen = `${c.listen.host}:${c.listen.port}`;
    }
  } catch {
    // A config that does not load yet is no reason not to mint a token; the port stays the default.
  }
  const port = listen.slice(listen.lastIndexOf(':') + 1);
  const loopback = /^(127\.|\[?::1\]?:|localhost:)/.test(listen);
  return {
    url: `ws://${hostname()}:${port}`,
    note: loopback ? `the hub listens on ${listen}, loopback only: other hosts need a listen address they can reach (or a proxy)` : '',
  };
}

export async function main(p: Parsed<typeof HUB>): Promise<number> {
  const env = process.env;
  if (p.positionals.length > 1) throw new UsageError(`unexpected argument "${p.positionals[1]}"`);
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
  const hub = host !== undefined ? collectorUrl(p, env) : null;

  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const token = randomBytes(32).toString('hex');
  try {
    writeFileSync(file, `${token}\n`, { mode: 0o600, flag: force ? 'w' : 'wx' });
    // A replaced file keeps the mode it had: make sure it is ours alone.
    chmodSync(file, 0o600);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') throw new ExitError(`${file} already exists; pass --force to replace its token`, 2);
    throw new ExitError(`cannot write ${file}: ${code ?? (e as Error).message}`, 1);
  }
  process.stdout.write(hub ? hostEntryText(name, file, hub.url, hub.note) : clientEntryText(name, role as Role, file));
  return 0;
}
