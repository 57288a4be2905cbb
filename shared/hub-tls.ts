// How a collector and the fleet CLI trust a hub that serves its own certificate (`[tls]`, often
// self-signed by `tma hub tls`): `--hub-ca FILE` adds that certificate as the one trusted issuer;
// `--hub-fingerprint SHA256` pins it instead. A pin is checked on a first handshake that sends
// nothing, and the real connection then trusts only that certificate and checks the pin again, so
// a token is never written to a peer that was not verified. A refusal says what is wrong with the
// certificate and which flag fixes it, in one line.

import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { connect, rootCertificates, type ConnectionOptions, type PeerCertificate } from 'node:tls';

export interface HubTrust {
  /** PEM file: the hub's certificate, or the CA that issued it. */
  caFile?: string;
  /** SHA-256 of the hub's certificate (hex, colons and case optional). */
  fingerprint?: string;
}

/** Options for `tls.connect` (and so for `ws` and undici's `connect`). */
export type HubTlsOptions = Pick<ConnectionOptions, 'ca' | 'checkServerIdentity'>;

/** `AB:CD:…` (Node's `fingerprint256` form) from any usual spelling; throws on anything else. */
export function parseFingerprint(text: string): string {
  const hex = text
    .trim()
    .replace(/^sha-?256[:=]?/i, '')
    .replace(/[:\s]/g, '')
    .toUpperCase();
  if (!/^[0-9A-F]{64}$/.test(hex))
    throw new Error(`--hub-fingerprint ${JSON.stringify(text)}: expected the certificate's SHA-256, 64 hex digits (colons allowed)`);
  return hex.match(/../g)!.join(':');
}

/** The trust flags as given; throws on a CA file that cannot be read or a malformed fingerprint. */
export function checkTrust(t: HubTrust): { ca?: string; fingerprint?: string } {
  if (t.caFile !== undefined && t.fingerprint !== undefined) throw new Error('give --hub-ca or --hub-fingerprint, not both');
  if (t.caFile !== undefined) {
    let ca: string;
    try {
      ca = readFileSync(t.caFile, 'utf8');
    } catch (e) {
      throw new Error(`cannot read --hub-ca ${t.caFile}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
    if (!ca.includes('-----BEGIN CERTIFICATE-----')) throw new Error(`--hub-ca ${t.caFile}: not a PEM certificate`);
    return { ca };
  }
  if (t.fingerprint !== undefined) return { fingerprint: parseFingerprint(t.fingerprint) };
  return {};
}

const pinMismatch = (pin: string, got: string) => new Error(`the hub's certificate has SHA-256 ${got}, not the pinned ${pin}`);

/** The certificate the hub presents, read on a handshake after which nothing is sent. */
function peerCertificate(host: string, port: number, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port, rejectUnauthorized: false, ...(isIP(host) ? {} : { servername: host }) });
    const timer = setTimeout(() => socket.destroy(new Error(`no TLS handshake with ${host}:${port} in ${timeoutMs} ms`)), timeoutMs);
    socket.once('secureConnect', () => {
      clearTimeout(timer);
      const cert = socket.getPeerX509Certificate();
      socket.destroy();
      if (!cert) reject(new Error(`${host}:${port} presented no certificate`));
      else resolve(cert.toString());
    });
    socket.once('error', (e: Error) => {
      clearTimeout(timer);
      reject(e);
    });
  });
}

/**
 * TLS options for dialling `url` (https: or wss:); `{}` when nothing is to be trusted beyond the
 * system's roots. A pin costs one extra handshake per connection.
 */
export async function hubTlsOptions(url: URL, trust: { ca?: string; fingerprint?: string }, timeoutMs = 10_000): Promise<HubTlsOptions> {
  if (trust.ca) return { ca: trust.ca };
  const pin = trust.fingerprint;
  if (!pin) return {};
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = Number(url.port || 443);
  const pem = await peerCertificate(host, port, timeoutMs);
  const got = new X509Certificate(pem).fingerprint256;
  if (got !== pin) throw pinMismatch(pin, got);
  return {
    // The pinned certificate may be self-signed (its own issuer) or issued by a public CA.
    ca: [...rootCertificates, pem],
    // The pin replaces the name check: this very certificate, whatever names it carries.
    checkServerIdentity: (_host: string, cert: PeerCertificate) => (cert.fingerprint256 === pin ? undefined : pinMismatch(pin, cert.fingerprint256)),
  };
}

const CERT_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_SIGNATURE_FAILURE',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/** One line for a handshake refused over the hub's certificate, naming the fix; null for any other error. */
export function certificateProblem(e: unknown): string | null {
  const err = e as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  const hit = err && CERT_CODES.has(err.code ?? '') ? err : err?.cause && CERT_CODES.has(err.cause.code ?? '') ? err.cause : null;
  if (!hit) return null;
  const what = (hit.message ?? hit.code ?? '').split('\n')[0];
  return `${what}; pass --hub-ca FILE (the hub's certificate, e.g. from tma hub tls) or --hub-fingerprint SHA256`;
}
