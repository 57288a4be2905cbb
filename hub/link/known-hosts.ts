// known_hosts, read the way OpenSSH reads it, so a file the user already trusts for `ssh` decides
// which hosts the hub's ssh transport may talk to. Pure: the caller reads the file and hands us
// the raw key blob the server presented; nothing here touches the disk or the network.

import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

export type KnownHostMarker = 'revoked' | 'cert-authority' | null;

export interface KnownHostEntry {
  /** 1-based line number, for messages. */
  line: number;
  marker: KnownHostMarker;
  /** Comma-separated patterns, or null when the entry is hashed. */
  patterns: string[] | null;
  hashed: { salt: Buffer; hash: Buffer } | null;
  keyType: string;
  key: Buffer;
}

/**
 * - match: a line for this host holds the presented key.
 * - mismatch: the host is known, but with other keys only (changed key, or someone in between).
 * - unknown: no line names this host.
 * - revoked: the presented key is listed under @revoked; it is refused for every host.
 */
export type HostKeyVerdict = 'match' | 'mismatch' | 'unknown' | 'revoked';

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

function decodeBase64(text: string): Buffer | null {
  if (!BASE64.test(text)) return null;
  const b = Buffer.from(text, 'base64');
  return b.length > 0 ? b : null;
}

function parseHashed(field: string): { salt: Buffer; hash: Buffer } | null {
  // |1|salt|hash — version 1 is the only one OpenSSH writes.
  const parts = field.split('|');
  if (parts.length !== 4 || parts[0] !== '' || parts[1] !== '1') return null;
  const salt = decodeBase64(parts[2] ?? '');
  const hash = decodeBase64(parts[3] ?? '');
  return salt && hash && hash.length === 20 ? { salt, hash } : null;
}

/** Every well-formed entry; malformed lines are skipped as OpenSSH skips them. */
export function parseKnownHosts(text: string): KnownHostEntry[] {
  const out: KnownHostEntry[] = [];
  const lines = text.split('\n');
  for (const [i, raw] of lines.entries()) {
    const fields = raw.trim().split(/[ \t]+/);
    if (fields[0] === undefined || fields[0] === '' || fields[0].startsWith('#')) continue;
    let marker: KnownHostMarker = null;
    if (fields[0].startsWith('@')) {
      const m = fields.shift()!;
      if (m === '@revoked') marker = 'revoked';
      else if (m === '@cert-authority') marker = 'cert-authority';
      else continue;
    }
    const [hosts, keyType, keyText] = fields;
    if (hosts === undefined || keyType === undefined || keyText === undefined) continue;
    const key = decodeBase64(keyText);
    if (!key) continue;
    let patterns: string[] | null = null;
    let hashed: KnownHostEntry['hashed'] = null;
    if (hosts.startsWith('|')) {
      hashed = parseHashed(hosts);
      if (!hashed) continue;
    } else {
      patterns = hosts.split(',').filter((p) => p !== '');
      if (patterns.length === 0) continue;
    }
    out.push({ line: i + 1, marker, patterns, hashed, keyType, key });
  }
  return out;
}

/** The name a host is filed under: bare on port 22, `[host]:port` elsewhere. */
export function knownHostsName(host: string, port: number): string {
  const h = host.toLowerCase();
  return port === 22 ? h : `[${h}]:${port}`;
}

/** OpenSSH glob: `*` any run, `?` one character, case-insensitive. */
function globMatch(pattern: string, name: string): boolean {
  const re = pattern
    .toLowerCase()
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${re}$`).test(name);
}

/** Whether an entry's host field names `name` (already in knownHostsName form). */
export function entryMatchesHost(entry: KnownHostEntry, name: string): boolean {
  if (entry.hashed) {
    const mac = createHmac('sha1', entry.hashed.salt).update(name).digest();
    return timingSafeEqual(mac, entry.hashed.hash);
  }
  let positive = false;
  for (const p of entry.patterns ?? []) {
    // A negated pattern that matches vetoes the whole line, whatever else matched.
    if (p.startsWith('!')) {
      if (globMatch(p.slice(1), name)) return false;
    } else if (globMatch(p, name)) {
      positive = true;
    }
  }
  return positive;
}

export function checkHostKey(entries: readonly KnownHostEntry[], name: string, key: Buffer): HostKeyVerdict {
  // Revocation is about the key, not the host: a revoked key is refused wherever it turns up.
  if (entries.some((e) => e.marker === 'revoked' && e.key.equals(key))) return 'revoked';
  const forHost = entries.filter((e) => e.marker === null && entryMatchesHost(e, name));
  if (forHost.length === 0) return 'unknown';
  return forHost.some((e) => e.key.equals(key)) ? 'match' : 'mismatch';
}

/** Key types the file holds for this host, in file order, without repeats. */
export function knownKeyTypes(entries: readonly KnownHostEntry[], name: string): string[] {
  const out: string[] = [];
  for (const e of entries) {
    if (e.marker === null && entryMatchesHost(e, name) && !out.includes(e.keyType)) out.push(e.keyType);
  }
  return out;
}

const SIGNATURE_ALGORITHMS: Record<string, string[]> = {
  'ssh-ed25519': ['ssh-ed25519'],
  'ecdsa-sha2-nistp256': ['ecdsa-sha2-nistp256'],
  'ecdsa-sha2-nistp384': ['ecdsa-sha2-nistp384'],
  'ecdsa-sha2-nistp521': ['ecdsa-sha2-nistp521'],
  'ssh-rsa': ['rsa-sha2-512', 'rsa-sha2-256', 'ssh-rsa'],
};

/**
 * Host key algorithms to offer so the server presents a key of a type we hold for it. Without this
 * a server with several keys could present one we do not know and be refused although another of
 * its keys is on file. Empty when nothing usable is on file: offer the defaults and let the check
 * refuse.
 */
export function hostKeyAlgorithms(keyTypes: readonly string[]): string[] {
  const out: string[] = [];
  for (const t of keyTypes) for (const a of SIGNATURE_ALGORITHMS[t] ?? []) if (!out.includes(a)) out.push(a);
  return out;
}

/** The type named inside an ssh wire-format public key blob. */
export function keyTypeOfBlob(blob: Buffer): string | null {
  if (blob.length < 4) return null;
  const n = blob.readUInt32BE(0);
  if (n === 0 || 4 + n > blob.length) return null;
  return blob.subarray(4, 4 + n).toString('latin1');
}

/** `SHA256:…` as `ssh-keygen -l` prints it. */
export function fingerprint(blob: Buffer): string {
  return `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;
}
