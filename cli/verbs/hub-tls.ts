// `tma hub tls [--name HOST[,HOST...]] [--force]`: a self-signed certificate and its key (0600) for the
// names and addresses given, beside hub.toml, and `[tls]` added to hub.toml pointing at them (the
// way `tma hub token` adds its entries). Node has no X.509 writer; the `openssl` command makes the
// pair (a timeout bounds it). A hub already serving HTTPS is told to reload, which renews its
// certificate in place; a plain-HTTP one switches on its next start.

import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { isIP } from 'node:net';
import { dirname, join } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { expandHome, loadHubConfig } from '../../hub/config/config.js';
import { UsageError, type Parsed } from '../args.js';
import type { HUB } from '../verb-flags.js';
import { ExitError } from '../local.js';
import { defaultHubConfigPath, localToken } from '../hub-files.js';
import { appendEntry, newHubToml, runningHub, signalReload, writeConfigAtomically, type RunningHub } from './hub-config-file.js';

const DAYS = 825;
const OPENSSL_TIMEOUT_MS = 30_000;

/** Where `tma hub tls` writes: a `tls` folder beside hub.toml. */
export const tlsFiles = (configPath: string) => ({ cert: join(dirname(configPath), 'tls', 'hub.crt'), key: join(dirname(configPath), 'tls', 'hub.key') });

/** DNS names and IP addresses, each checked; the first is the subject's name. */
export function subjectAltNames(names: string[]): string {
  return names
    .map((n) => {
      if (isIP(n.replace(/^\[|\]$/g, ''))) return `IP:${n.replace(/^\[|\]$/g, '')}`;
      if (!/^(\*\.)?[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/.test(n)) {
        throw new UsageError(`--name "${n}": a DNS name or an IP address`);
      }
      return `DNS:${n}`;
    })
    .join(',');
}

/** The openssl config of the certificate: its own issuer (so `--hub-ca` trusts it), for servers only. */
function opensslConfig(names: string[]): string {
  return [
    '[req]',
    'distinguished_name = dn',
    'x509_extensions = ext',
    'prompt = no',
    '[dn]',
    `CN = ${names[0]!.replace(/[^A-Za-z0-9.:*-]/g, '')}`,
    'O = tma hub (self-signed)',
    '[ext]',
    `subjectAltName = ${subjectAltNames(names)}`,
    'basicConstraints = critical, CA:TRUE, pathlen:0',
    'keyUsage = critical, digitalSignature, keyCertSign',
    'extendedKeyUsage = serverAuth',
    'subjectKeyIdentifier = hash',
    '',
  ].join('\n');
}

/** A P-256 key and a self-signed certificate for `names`, as PEM text. */
export function mintCertificate(names: string[], scratch: string): { cert: string; key: string } {
  mkdirSync(scratch, { recursive: true, mode: 0o700 });
  const conf = join(scratch, 'openssl.cnf');
  const keyOut = join(scratch, 'key.pem');
  const certOut = join(scratch, 'cert.pem');
  try {
    writeFileSync(conf, opensslConfig(names), { mode: 0o600 });
    // prettier-ignore
    execFileSync('openssl', ['req', '-x509', '-config', conf, '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
      '-keyout', keyOut, '-out', certOut, '-days', String(DAYS), '-sha256'], { timeout: OPENSSL_TIMEOUT_MS, stdio: ['ignore', 'ignore', 'pipe'] });
    return { cert: readFileSync(certOut, 'utf8'), key: readFileSync(keyOut, 'utf8') };
  } catch (e) {
    const err = e as NodeJS.ErrnoException & { stderr?: Buffer; signal?: string };
    if (err.code === 'ENOENT') throw new ExitError('tma hub tls needs the openssl command (Debian: apt-get install openssl)', 1);
    if (err.signal) throw new ExitError(`openssl did not finish in ${OPENSSL_TIMEOUT_MS / 1000} s`, 1);
    throw new ExitError(`openssl failed: ${(err.stderr?.toString() ?? err.message).trim().split('\n')[0]}`, 1);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** `[tls]` as hub.toml names it now, resolved; null when it has none. */
function listedTls(configPath: string, text: string): { cert: string; key: string } | null {
  let raw: Record<string, unknown>;
  try {
    raw = parseToml(text);
  } catch {
    return null;
  }
  const t = raw.tls as { cert_file?: unknown; key_file?: unknown } | undefined;
  if (!t || typeof t !== 'object') return null;
  const at = (v: unknown) => (typeof v === 'string' ? (v.startsWith('/') || v.startsWith('~') ? expandHome(v) : join(dirname(configPath), v)) : '');
  return { cert: at(t.cert_file), key: at(t.key_file) };
}

/** Written beside their final names, then renamed: a hub reloading meanwhile reads one whole pair. */
function writePair(files: { cert: string; key: string }, pem: { cert: string; key: string }): void {
  mkdirSync(dirname(files.cert), { recursive: true, mode: 0o700 });
  const tmp = (f: string) => `${f}.tma-new-${process.pid}`;
  writeFileSync(tmp(files.key), pem.key, { mode: 0o600 });
  chmodSync(tmp(files.key), 0o600);
  writeFileSync(tmp(files.cert), pem.cert, { mode: 0o644 });
  renameSync(tmp(files.key), files.key);
  renameSync(tmp(files.cert), files.cert);
}

/**
 * The commands that trust the certificate, at the address a collector should dial: the running
 * hub's port (it may listen where hub.toml does not say, by --listen), and its host when the
 * certificate names it; else the certificate's first DNS name at the configured port.
 */
function trustLines(configPath: string, cert: string, fingerprint: string, names: string[], running: RunningHub | null): string[] {
  let port = '7480';
  try {
    port = String(loadHubConfig(configPath).listen.port);
  } catch {
    // the default port is shown
  }
  let host = names.find((n) => !isIP(n) && n !== 'localhost') ?? names[0]!;
  if (running) {
    const bound = /^https?:\/\/(\[[^\]]+\]|[^:/]+):(\d+)/.exec(running.url);
    if (bound) {
      port = bound[2]!;
      const h = bound[1]!.replace(/^\[|\]$/g, '');
      if (names.includes(h) && h !== '0.0.0.0' && h !== '::') host = h;
    }
  }
  const at = isIP(host) === 6 ? `[${host}]` : host;
  return [
    '# collectors and the fleet CLI trust it with the certificate copied to them, or by its fingerprint:',
    `#   tma collector --hub wss://${at}:${port} --hub-ca ${cert} --token-file FILE`,
    `#   tma --hub https://${at}:${port} --hub-fingerprint ${fingerprint} ls`,
    '# a phone trusts it by opening the page once and accepting the certificate, or by installing',
    `# ${cert} as a CA profile (iOS: Settings > General > About > Certificate Trust Settings)`,
  ];
}

/** `tma hub tls --show`: the fingerprint of the certificate hub.toml serves, kept in its file. */
function show(configPath: string): number {
  const text = existsSync(configPath) ? readFileSync(configPath, 'utf8') : '';
  const cert = listedTls(configPath, text)?.cert || tlsFiles(configPath).cert;
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(readFileSync(cert));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new ExitError(
      code === 'ENOENT' ? `no certificate at ${cert}; \`tma hub tls\` mints one` : `${cert}: not a PEM certificate (${code ?? (e as Error).message})`,
      1,
    );
  }
  const names = (x509.subjectAltName ?? '')
    .split(', ')
    .map((n) => n.replace(/^(DNS|IP Address):/, ''))
    .filter(Boolean);
  process.stdout.write(
    [
      `# certificate ${cert} for ${names.join(', ')}, valid until ${x509.validTo}`,
      `# SHA-256 fingerprint: ${x509.fingerprint256}`,
      ...trustLines(configPath, cert, x509.fingerprint256, names.length ? names : ['localhost'], runningHub(configPath)),
      '',
    ].join('\n'),
  );
  return 0;
}

export async function main(p: Parsed<typeof HUB>): Promise<number> {
  const env = process.env;
  if (p.positionals.length > 1) throw new UsageError(`unexpected argument "${p.positionals[1]}" (several names: --name a.lan,10.0.0.5)`);
  const stray = (['host', 'client', 'role', 'dir', 'print', 'ttl', 'json'] as const).find((k) => p.opts[k] !== undefined);
  if (stray) throw new UsageError(`--${stray} is not a flag of \`tma hub tls\``);
  if (p.opts.show === true) {
    if (p.opts.name !== undefined || p.opts.force !== undefined) throw new UsageError('--show mints nothing: it takes neither --name nor --force');
    return show(p.globals.config ?? defaultHubConfigPath(env));
  }
  const given = (p.opts.name ?? '')
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean);
  const names = given.length ? [...new Set(given)] : [hostname(), 'localhost', '127.0.0.1', '::1'];
  subjectAltNames(names);
  const configPath = p.globals.config ?? defaultHubConfigPath(env);
  const files = tlsFiles(configPath);
  const force = p.opts.force === true;

  const created = !existsSync(configPath);
  const base = created ? newHubToml(localToken(env).file) : readFileSync(configPath, 'utf8');
  const listed = listedTls(configPath, base);
  if (listed && (listed.cert !== files.cert || listed.key !== files.key)) {
    throw new ExitError(`${configPath} already has [tls] (cert_file ${listed.cert}); edit or remove it first`, 2);
  }
  const exists = existsSync(files.cert) || existsSync(files.key);
  if (exists && !force) throw new ExitError(`${files.cert} already exists; pass --force to replace the certificate and its key`, 2);

  const pem = mintCertificate(names, join(dirname(files.cert), `.tma-mint-${process.pid}`));
  const entry = [
    '# HTTPS and wss:// on the listen port, with the certificate `tma hub tls` made',
    '[tls]',
    `cert_file = ${JSON.stringify(files.cert)}`,
    `key_file = ${JSON.stringify(files.key)}`,
    '',
  ].join('\n');
  // Checked as the hub will read it, with the new pair in place, before anything is written.
  const read = (path: string) => (path === files.cert ? pem.cert : path === files.key ? pem.key : readFileSync(path, 'utf8'));
  const text = listed ? null : appendEntry(configPath, base, entry, read);
  writePair(files, pem);
  if (text !== null) writeConfigAtomically(configPath, text);

  const fingerprint = new X509Certificate(pem.cert).fingerprint256;
  const running = runningHub(configPath);
  let said: string;
  if (!running) said = 'no hub runs for it now; `tma hub` serves HTTPS when it starts';
  else if (running.url.startsWith('https:')) {
    signalReload(running);
    said = `the running hub (pid ${running.pid}) was told to reload: new connections get this certificate`;
  } else said = `the running hub (pid ${running.pid}) serves plain HTTP: restart it to serve HTTPS`;
  process.stdout.write(
    [
      `# certificate for ${names.join(', ')} (${DAYS} days) written to ${files.cert}, its key to ${files.key} (mode 0600)`,
      `# SHA-256 fingerprint: ${fingerprint}`,
      `# ${text === null ? 'already in' : 'added to'} ${configPath}; ${said}`,
      ...entry.split('\n').slice(1, -1),
      ...trustLines(configPath, files.cert, fingerprint, names, running),
      '',
    ].join('\n'),
  );
  return 0;
}
