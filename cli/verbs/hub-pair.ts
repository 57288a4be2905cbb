// `tma hub pair [--role viewer|operator] [--name NAME] [--ttl 10m]`: one device, one client
// token. The token goes in a 0600 file, its `[[client]]` entry into hub.toml (with `expires` when
// --ttl is given: the hub refuses the token from then on, and ends its streams), the running hub
// reloads it, and the page link carrying the token in its fragment is printed with a QR code of
// it. The link uses the address a phone can reach: public_url, else the hub's own listen address
// (this machine's LAN address when it listens on all of them), with a warning when that is loopback.

import { randomBytes, X509Certificate } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import { join, resolve } from 'node:path';
import QRCode from 'qrcode';
import { DEFAULT_LISTEN, expandHome, loadHubConfig, type HubConfig } from '../../hub/config/config.js';
import { UsageError, type Parsed } from '../args.js';
import type { HUB } from '../verb-flags.js';
import { ExitError } from '../local.js';
import { defaultHubConfigPath, defaultTokenDir, localToken } from '../hub-files.js';
import { appendEntry, checkName, listedTokenFile, newHubToml, runningHub, signalReload, writeConfigAtomically, writeToken } from './hub-config-file.js';

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `90s`, `10m`, `2h`, `7d`: milliseconds. */
export function parseTtl(text: string): number {
  const m = /^(\d{1,6})([smhd])$/.exec(text.trim());
  if (!m || Number(m[1]) === 0) throw new UsageError(`--ttl "${text}": a positive whole number with s, m, h or d (10m, 2h, 7d)`);
  return Number(m[1]) * UNIT_MS[m[2]!]!;
}

/** The first LAN IPv4 address of this machine, for a hub listening on every address. */
function lanAddress(): string | null {
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return null;
}

const LOOPBACK_HOST = /^(127\.|localhost$|::1$|\[::1\]$)/;

/** The page's base URL for another device, and a warning when that device likely cannot reach it. */
export function pageBase(config: HubConfig | null, runningUrl: string | null): { base: string; warning: string | null } {
  if (config?.publicUrl) return { base: config.publicUrl, warning: null };
  const scheme = config?.tls ? 'https' : 'http';
  const url = new URL(
    runningUrl ??
      `${scheme}://${config ? `${config.listen.host.includes(':') ? `[${config.listen.host}]` : config.listen.host}:${config.listen.port}` : DEFAULT_LISTEN}`,
  );
  const host = url.hostname;
  if (host === '0.0.0.0' || host === '[::]') {
    const lan = lanAddress();
    if (lan) url.hostname = lan;
  }
  const base = url.origin;
  if (LOOPBACK_HOST.test(url.hostname)) {
    return {
      base,
      warning: `the hub listens on ${url.host}, loopback only: a phone cannot open this link; set public_url in hub.toml, or start the hub with --listen 0.0.0.0:${url.port || 80}`,
    };
  }
  return {
    base,
    warning: url.protocol === 'http:' ? 'the link is plain HTTP: the token travels in clear and browsers give no notifications; tma hub tls adds HTTPS' : null,
  };
}

/**
 * A phone meets a self-signed certificate as a warning page: said how to check and trust it (the
 * page needs a trusted one for notifications), and the way round it, a proxy with a real one.
 */
export function phoneTrust(config: HubConfig | null, page: string): string[] {
  if (!config?.tls || config.publicUrl || !page.startsWith('https:')) return [];
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(readFileSync(config.tls.certFile));
  } catch {
    return [];
  }
  if (cert.issuer !== cert.subject) return [];
  return [
    '# the certificate is self-signed: the phone warns once; accept it only if it shows SHA-256',
    `#   ${cert.fingerprint256}`,
    `# or install ${config.tls.certFile} on the phone as a trusted certificate (notifications need it);`,
    '# a certificate phones already trust: serve the hub behind a proxy and set public_url in hub.toml',
  ];
}

/** A TOML offset date-time, whole seconds, rounded up so the token lives at least the --ttl given. */
const tomlTime = (ms: number) => new Date(Math.ceil(ms / 1000) * 1000).toISOString().replace(/\.\d+Z$/, 'Z');

export function pairEntryText(name: string, role: string, file: string, expires: number | null, added: string): string {
  return [
    `# device ${name} paired (${role}) by tma hub pair; its token is in ${file} (mode 0600)`,
    added,
    '[[client]]',
    `name = ${JSON.stringify(name)}`,
    `token_file = ${JSON.stringify(file)}`,
    `role = ${JSON.stringify(role)}`,
    ...(expires !== null ? [`expires = ${tomlTime(expires)}`] : []),
    '',
  ].join('\n');
}

export async function main(p: Parsed<typeof HUB>): Promise<number> {
  const env = process.env;
  if (p.positionals.length > 1) throw new UsageError(`unexpected argument "${p.positionals[1]}"`);
  const stray = (['host', 'client', 'dir', 'print', 'json', 'show'] as const).find((k) => p.opts[k] !== undefined);
  if (stray) throw new UsageError(`--${stray} is not a flag of \`tma hub pair\``);
  const role = p.opts.role ?? 'viewer';
  if (role !== 'viewer' && role !== 'operator') throw new UsageError('--role is viewer or operator');
  const name = checkName(p.opts.name ?? `device-${randomBytes(2).toString('hex')}`, 'device name');
  const ttlMs = p.opts.ttl !== undefined ? parseTtl(p.opts.ttl) : null;
  const force = p.opts.force === true;

  const dir = resolve(expandHome(defaultTokenDir(env)));
  const file = join(dir, name);
  if (existsSync(file) && !force) throw new ExitError(`${file} already exists (a device named ${name}?); choose another --name, or tma hub revoke ${name}`, 2);
  const configPath = p.globals.config ?? defaultHubConfigPath(env);
  const base = existsSync(configPath) ? readFileSync(configPath, 'utf8') : newHubToml(localToken(env).file);
  if (listedTokenFile(configPath, base, 'client', name) !== null)
    throw new ExitError(`client ${name} is already in ${configPath}; choose another --name, or tma hub revoke ${name}`, 2);

  const token = randomBytes(32).toString('hex');
  const expires = ttlMs !== null ? Date.now() + ttlMs : null;
  const running = runningHub(configPath);
  const said = running ? `the running hub (pid ${running.pid}) was told to reload it` : 'no hub runs for it now; `tma hub` reads it when it starts';
  const entry = pairEntryText(name, role, file, expires, `# added to ${configPath}; ${said}`);
  const text = appendEntry(configPath, base, entry, (path) => (path === file ? token : readFileSync(path, 'utf8')));
  writeToken(dir, file, token, force);
  writeConfigAtomically(configPath, text);
  if (running) signalReload(running);

  let config: HubConfig | null = null;
  try {
    config = loadHubConfig(configPath);
  } catch {
    // checked just above; a race with another edit only costs the public_url here
  }
  const { base: page, warning } = pageBase(config, running?.url ?? null);
  const link = `${page}/#token=${token}`;
  const qr = await QRCode.toString(link, { type: 'terminal', small: true });
  if (warning) process.stderr.write(`tma: warning: ${warning}\n`);
  process.stdout.write(
    [
      entry.trimEnd(),
      '',
      `# open on ${name} (${role}${expires !== null ? `, until ${new Date(expires).toISOString()}` : ''}):`,
      link,
      qr.trimEnd(),
      ...phoneTrust(config, page),
      `# list devices: tma hub clients; unpair: tma hub revoke ${name}`,
      '',
    ].join('\n'),
  );
  return 0;
}
