// hub.toml: strict like config.toml — a misspelt key in a file that holds credentials must stop the
// hub rather than quietly open or close a door. Token files are resolved against the config file's
// folder so a config and its secrets can move together.

import { readFileSync } from 'node:fs';
import { createSecureContext } from 'node:tls';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { z } from 'zod';
import { DEAD_AFTER_HEARTBEATS, HEARTBEAT_MS } from '../../shared/protocol.js';
import { tokenFileWarning } from '../../shared/token-file-mode.js';
import { notifyEntry, settleNotifySinks, type NotifySinkConfig } from '../notify/sink-config.js';

export const DEFAULT_LISTEN = '127.0.0.1:7480';
/** A host silent for this many heartbeat intervals is stale (when stale_after_secs is unset). */
export const staleAfterDefault = (heartbeatMs: number = HEARTBEAT_MS) => heartbeatMs * DEAD_AFTER_HEARTBEATS;
export const DEFAULT_LOST_AFTER_MS = 86_400_000;
export const DEFAULT_SSH_COMMAND = 'tma collector --stdio';

export const hostName = z
  .string()
  .min(1)
  .max(253)
  .regex(/^[A-Za-z0-9._-]+$/, 'host names use letters, digits, dot, dash, underscore');
const secs = z.number().positive();

const collectorEntry = z.strictObject({
  host: hostName,
  token: z.string().optional(),
  token_file: z.string().min(1).optional(),
});

const clientEntry = z.strictObject({
  name: z.string().min(1).max(128),
  token: z.string().optional(),
  token_file: z.string().min(1).optional(),
  role: z.enum(['viewer', 'operator']),
  /** A TOML date-time (`tma hub pair --ttl`): the hub refuses the token from then on. */
  expires: z.date().optional(),
});

const tlsEntry = z.strictObject({ cert_file: z.string().min(1), key_file: z.string().min(1) });

const sshEntry = z.strictObject({
  name: hostName,
  host: z.string().min(1),
  port: z.number().int().min(1).max(65535).default(22),
  user: z.string().min(1),
  identity: z.string().min(1),
  known_hosts: z.string().min(1),
  command: z.string().min(1).optional(),
});

const hubSchema = z.strictObject({
  listen: z.string().optional(),
  public_url: z
    .string()
    .regex(/^https?:\/\/[^\s/]+(\/[^\s]*)?$/, 'an http:// or https:// URL')
    .optional(),
  stale_after_secs: secs.optional(),
  lost_after_secs: secs.optional(),
  collector: z.array(collectorEntry).optional(),
  client: z.array(clientEntry).optional(),
  ssh: z.array(sshEntry).optional(),
  notify: z.array(notifyEntry).optional(),
  metrics: z.strictObject({ per_pane: z.boolean().optional() }).optional(),
  fleet: z
    .strictObject({
      hubs: z
        .array(z.string().regex(/^wss?:\/\/[^\s/]+(\/[^\s]*)?$/, 'a ws:// or wss:// URL'))
        .max(64)
        .optional(),
    })
    .optional(),
  tls: tlsEntry.optional(),
  nats: z
    .strictObject({
      url: z
        .string()
        .regex(/^(nats|tls):\/\/\S+$/, 'a nats:// or tls:// URL')
        .optional(),
      servers: z
        .array(z.string().regex(/^(nats|tls):\/\/\S+$/, 'a nats:// or tls:// URL'))
        .min(1)
        .optional(),
      creds_file: z.string().min(1).optional(),
      /** A NATS user (deploy/nats/tma-account.conf) and its password file; the hub's id and inboxes start with the user's name. */
      user: z.string().min(1).max(128).optional(),
      password_file: z.string().min(1).optional(),
      /** The CA that signed the NATS servers' certificates: the connection is TLS, verified against it. */
      tls_ca_file: z.string().min(1).optional(),
      /** The fleet's secret (0600, the same on every hub, given out of band): links and NATS writes are keyed from it. */
      fleet_key_file: z.string().min(1).optional(),
      /** Start even though the NATS server asks no credentials and is not on this machine. */
      allow_unauthenticated: z.boolean().optional(),
      /** Start even though the NATS server is not on this machine and is reached without TLS. */
      allow_plaintext: z.boolean().optional(),
      replicas: z.union([z.literal(1), z.literal(3), z.literal(5)]).optional(),
      lease_secs: secs.optional(),
    })
    .optional(),
});

export type Role = 'viewer' | 'operator';

export interface ListenAddress {
  host: string;
  port: number;
}

export interface CollectorCredential {
  host: string;
  token: string;
}

export interface ClientCredential {
  name: string;
  token: string;
  role: Role;
  /** Epoch ms from which the token is refused; absent: it does not expire. */
  expiresAt?: number;
}

/** `[tls]`: the PEM text as read, and the files it came from (a reload reads them again). */
export interface HubTls {
  certFile: string;
  keyFile: string;
  cert: string;
  key: string;
}

export interface SshTarget {
  name: string;
  host: string;
  port: number;
  user: string;
  identity: string;
  known_hosts: string;
  command: string;
}

export interface HubConfig {
  listen: ListenAddress;
  /** The address people reach the hub at (a proxy, a LAN name): the base of every link it sends. */
  publicUrl?: string;
  /** null: three heartbeat intervals, whatever the interval is. */
  staleAfterMs: number | null;
  lostAfterMs: number;
  collectors: CollectorCredential[];
  clients: ClientCredential[];
  ssh: SshTarget[];
  /** `[[notify]]` sinks; absent or empty: the hub records notifications and sends them nowhere. */
  notify?: NotifySinkConfig[];
  /** `[metrics]`; absent: the defaults (no per-pane series). */
  metrics?: { perPane: boolean };
  /** `[fleet] hubs`: every hub of this fleet, named in each welcome so collectors can fail over. */
  fleetHubs?: string[];
  /** `[tls]`: HTTPS and wss:// on the listen port; absent: plain HTTP. */
  tls?: HubTls;
  /** `[nats]`: the fleet lives in JetStream and any number of hubs serve it; absent: one hub, in memory. */
  nats?: NatsConfig;
}

export interface NatsConfig {
  /** Every server the client may use; `url` first when both are given. */
  servers: string[];
  /** A `.creds` file (JWT and NKey seed), resolved like token files. */
  credsFile?: string;
  /** A user of the server's own `authorization` block, and its password (read from password_file). */
  user?: { name: string; password: string };
  /** `tls_ca_file`, resolved: the hub speaks TLS to NATS and verifies the servers against it. */
  tlsCaFile?: string;
  /** The fleet secret's bytes (`fleet_key_file`); a hub on NATS refuses to start without it. */
  fleetKey?: Buffer;
  /** `allow_unauthenticated`: an open NATS off this machine is accepted, not refused. */
  allowUnauthenticated?: boolean;
  /** `allow_plaintext`: NATS off this machine without TLS is accepted, not refused. */
  allowPlaintext?: boolean;
  /** Copies of every bucket and stream: 1, or 3 / 5 on a cluster. */
  replicas: 1 | 3 | 5;
  /** How long a hub's claim on a host lasts unrenewed: a dead hub's hosts move after this. */
  leaseMs: number;
}

export const DEFAULT_NATS_LEASE_MS = 3000;

export class HubConfigError extends Error {}

/** `host:port`, with IPv6 hosts in brackets (`[::1]:7480`). Port 0 asks the OS for a free one. */
export function parseListen(text: string): ListenAddress {
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:\s[\]]+)):(\d{1,5})$/.exec(text.trim());
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65535) throw new HubConfigError(`listen "${text}": expected HOST:PORT (port 0–65535)`);
  return { host: (m[1] ?? m[2])!, port };
}

function issuePath(path: readonly PropertyKey[]): string {
  return path
    .map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`))
    .join('')
    .replace(/^\./, '');
}

export type ReadTokenFile = (path: string) => string;

/** `~/x` means the user's home, as it would in a shell. */
export function expandHome(path: string): string {
  return path === '~' || path.startsWith('~/') ? join(process.env.HOME || homedir(), path.slice(1)) : path;
}

const readTokenFromDisk: ReadTokenFile = (path) => readFileSync(path, 'utf8');

function resolveFile(file: string, named: string): string {
  const path = expandHome(named);
  return isAbsolute(path) ? path : resolve(dirname(file), path);
}

function readPem(file: string, where: string, named: string, read: ReadTokenFile): { path: string; text: string } {
  const path = resolveFile(file, named);
  let text: string;
  try {
    text = read(path);
  } catch (e) {
    throw new HubConfigError(`${file}: ${where}: cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  if (!text.includes('-----BEGIN ')) throw new HubConfigError(`${file}: ${where}: ${path} is not a PEM file`);
  return { path, text };
}

function resolveToken(file: string, where: string, entry: { token?: string | undefined; token_file?: string | undefined }, read: ReadTokenFile): string {
  if (entry.token !== undefined && entry.token_file !== undefined) {
    throw new HubConfigError(`${file}: ${where}: set token or token_file, not both`);
  }
  let token: string;
  if (entry.token_file !== undefined) {
    const path = resolveFile(file, entry.token_file);
    try {
      token = read(path);
    } catch (e) {
      throw new HubConfigError(`${file}: ${where}.token_file: cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
  } else if (entry.token !== undefined) {
    token = entry.token;
  } else {
    throw new HubConfigError(`${file}: ${where}: token or token_file is required`);
  }
  token = token.trim();
  // The message names the entry, never the token's text.
  if (token === '') throw new HubConfigError(`${file}: ${where}: the token is empty`);
  return token;
}

/**
 * Parse hub.toml text. `file` is only used in messages and to resolve relative token files;
 * `read` is injectable so tests need no files on disk.
 */
export function parseHubConfig(file: string, text: string, read: ReadTokenFile = readTokenFromDisk, readPublic: ReadTokenFile = read): HubConfig {
  let raw: unknown;
  try {
    raw = parseToml(text);
  } catch (e) {
    const at = (e as { line?: unknown }).line;
    throw new HubConfigError(`${file}: not valid TOML: ${(e as Error).message.split('\n')[0]}${typeof at === 'number' ? ` (line ${at})` : ''}`);
  }
  const r = hubSchema.safeParse(raw);
  if (!r.success) {
    const i = r.error.issues[0]!;
    const where = issuePath(i.path);
    if (i.code === 'unrecognized_keys') {
      throw new HubConfigError(`${file}: ${[where, i.keys[0]].filter(Boolean).join('.')}: unknown key`);
    }
    throw new HubConfigError(`${file}: ${where || '(top level)'}: ${i.message}`);
  }
  const c = r.data;
  let listen: ListenAddress;
  try {
    listen = parseListen(c.listen ?? DEFAULT_LISTEN);
  } catch (e) {
    throw new HubConfigError(`${file}: ${(e as Error).message}`);
  }

  const collectors = (c.collector ?? []).map((e, i) => ({
    host: e.host,
    token: resolveToken(file, `collector[${i}]`, e, read),
  }));
  const clients = (c.client ?? []).map((e, i) => ({
    name: e.name,
    role: e.role,
    token: resolveToken(file, `client[${i}]`, e, read),
    ...(e.expires ? { expiresAt: e.expires.getTime() } : {}),
  }));
  // The hub binds the link to `name`; the default command says so to the remote collector, whose
  // own machine name may differ. A custom command is run exactly as written.
  const ssh = (c.ssh ?? []).map((e) => ({ ...e, command: e.command ?? `${DEFAULT_SSH_COMMAND} --host-name ${e.name}` }));

  // One token must mean one principal, and one host name one publisher: otherwise the binding of
  // a host to its credential is ambiguous.
  const seenHosts = new Map<string, string>();
  for (const [i, e] of collectors.entries()) {
    if (seenHosts.has(e.host)) throw new HubConfigError(`${file}: collector[${i}].host: "${e.host}" is already listed`);
    seenHosts.set(e.host, `collector[${i}]`);
  }
  for (const [i, e] of ssh.entries()) {
    if (seenHosts.has(e.name)) throw new HubConfigError(`${file}: ssh[${i}].name: "${e.name}" is already listed`);
    seenHosts.set(e.name, `ssh[${i}]`);
  }
  const seenClients = new Set<string>();
  for (const [i, e] of clients.entries()) {
    if (seenClients.has(e.name)) throw new HubConfigError(`${file}: client[${i}].name: "${e.name}" is already listed`);
    seenClients.add(e.name);
  }
  const tokens = new Map<string, string>();
  const all = [...collectors.map((e, i) => [`collector[${i}]`, e.token] as const), ...clients.map((e, i) => [`client[${i}]`, e.token] as const)];
  for (const [where, token] of all) {
    const other = tokens.get(token);
    if (other) throw new HubConfigError(`${file}: ${where}: uses the same token as ${other}`);
    tokens.set(token, where);
  }

  return {
    listen,
    // Only when set, like notify: a config without it reads exactly as before.
    ...(c.public_url ? { publicUrl: c.public_url.replace(/\/+$/, '') } : {}),
    staleAfterMs: c.stale_after_secs !== undefined ? Math.round(c.stale_after_secs * 1000) : null,
    lostAfterMs: c.lost_after_secs !== undefined ? Math.round(c.lost_after_secs * 1000) : DEFAULT_LOST_AFTER_MS,
    collectors,
    clients,
    ssh,
    // Only when configured: a config without sinks reads exactly as it did before they existed.
    ...(c.notify ? { notify: notifySinks(file, c.notify, read) } : {}),
    ...(c.metrics ? { metrics: { perPane: c.metrics.per_pane ?? false } } : {}),
    ...(c.fleet?.hubs?.length ? { fleetHubs: c.fleet.hubs } : {}),
    ...(c.tls ? { tls: tlsOf(file, c.tls, read, readPublic) } : {}),
    ...(c.nats ? { nats: natsSection(file, c.nats, read) } : {}),
  };
}

/** The certificate is public (no mode warning); the key is read as a token file is. */
function tlsOf(file: string, t: { cert_file: string; key_file: string }, read: ReadTokenFile, readPublic: ReadTokenFile): HubTls {
  const cert = readPem(file, 'tls.cert_file', t.cert_file, readPublic);
  const key = readPem(file, 'tls.key_file', t.key_file, read);
  // A pair that does not load must stop a start, or a reload, here rather than at the first handshake.
  try {
    createSecureContext({ cert: cert.text, key: key.text });
  } catch (e) {
    throw new HubConfigError(`${file}: tls: ${cert.path} and ${key.path} do not load as a certificate and its key: ${(e as Error).message}`);
  }
  return { certFile: cert.path, keyFile: key.path, cert: cert.text, key: key.text };
}

function natsSection(file: string, n: NonNullable<z.infer<typeof hubSchema>['nats']>, read: ReadTokenFile): NatsConfig {
  const servers = [...(n.url ? [n.url] : []), ...(n.servers ?? []).filter((s) => s !== n.url)];
  if (servers.length === 0) throw new HubConfigError(`${file}: nats: set url or servers`);
  let credsFile: string | undefined;
  if (n.creds_file !== undefined) {
    const named = expandHome(n.creds_file);
    credsFile = isAbsolute(named) ? named : resolve(dirname(file), named);
  }
  return {
    servers,
    ...(credsFile ? { credsFile } : {}),
    ...natsSecrets(file, n, read),
    replicas: n.replicas ?? 1,
    leaseMs: n.lease_secs !== undefined ? Math.round(n.lease_secs * 1000) : DEFAULT_NATS_LEASE_MS,
  };
}

/** Fleet secrets shorter than this are refused: the link and write keys are derived from it. */
export const FLEET_KEY_MIN_CHARS = 32;

/** `[nats]`'s secrets, read as token files are (a loose mode is warned of). */
function natsSecrets(file: string, n: NonNullable<z.infer<typeof hubSchema>['nats']>, read: ReadTokenFile): Partial<NatsConfig> {
  const readSecret = (where: string, named: string): string => {
    const path = resolveFile(file, named);
    try {
      return read(path).trim();
    } catch (e) {
      throw new HubConfigError(`${file}: nats.${where}: cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
  };
  if ((n.user === undefined) !== (n.password_file === undefined)) throw new HubConfigError(`${file}: nats: set user and password_file together`);
  if (n.user !== undefined && n.creds_file !== undefined) throw new HubConfigError(`${file}: nats: set creds_file or user, not both`);
  const out: Partial<NatsConfig> = {};
  if (n.user !== undefined) out.user = { name: n.user, password: readSecret('password_file', n.password_file!) };
  if (n.tls_ca_file !== undefined) out.tlsCaFile = resolveFile(file, n.tls_ca_file);
  if (n.fleet_key_file !== undefined) {
    const key = readSecret('fleet_key_file', n.fleet_key_file);
    if (key.length < FLEET_KEY_MIN_CHARS) {
      throw new HubConfigError(`${file}: nats.fleet_key_file: holds ${key.length} characters, needs at least ${FLEET_KEY_MIN_CHARS} (openssl rand -hex 32)`);
    }
    out.fleetKey = Buffer.from(key, 'utf8');
  }
  if (n.allow_unauthenticated) out.allowUnauthenticated = true;
  if (n.allow_plaintext) out.allowPlaintext = true;
  return out;
}

/** `--nats URL[,URL…]` over hub.toml's `[nats]`: the flag's servers, the file's other settings. */
export function withNatsFlag(config: HubConfig, flag: string): HubConfig {
  const servers = flag
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const bad = servers.find((s) => !/^(nats|tls):\/\/\S+$/.test(s));
  if (servers.length === 0 || bad !== undefined) throw new HubConfigError(`--nats "${bad ?? flag}": expected nats://HOST:PORT (comma-separated for several)`);
  return { ...config, nats: { replicas: 1, leaseMs: DEFAULT_NATS_LEASE_MS, ...config.nats, servers } };
}

function notifySinks(file: string, entries: Parameters<typeof settleNotifySinks>[1], read: ReadTokenFile): NotifySinkConfig[] {
  try {
    return settleNotifySinks(file, entries, read);
  } catch (e) {
    throw new HubConfigError((e as Error).message);
  }
}

/** `warn` hears about token files other users can read (the hub logs it; nothing is refused). */
export function loadHubConfig(file: string, warn?: (line: string) => void): HubConfig {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new HubConfigError(`${file}: cannot read: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  if (!warn) return parseHubConfig(file, text);
  return parseHubConfig(
    file,
    text,
    (path) => {
      const token = readTokenFromDisk(path);
      const w = tokenFileWarning(path);
      if (w) warn(w);
      return token;
    },
    readTokenFromDisk,
  );
}
