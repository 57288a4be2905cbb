// A ws:// dial to a hub that serves TLS ends in a bare "socket hang up": the hub read a plain HTTP
// request where it wanted a TLS handshake. One handshake to the same address, sending nothing and
// trusting anything (no token goes over it), tells that case apart, so the collector and the CLI say in one
// line what to change instead of retrying forever with no hint.

import { connect } from 'node:tls';

const PROBE_TIMEOUT_MS = 3_000;

/** True when `url` (ws://HOST:PORT) answers a TLS handshake. */
export function speaksTls(url: string, timeoutMs = PROBE_TIMEOUT_MS): Promise<boolean> {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return Promise.resolve(false);
  }
  const host = u.hostname.replace(/^\[|\]$/g, '');
  const port = Number(u.port || 80);
  return new Promise((resolve) => {
    const s = connect({ host, port, rejectUnauthorized: false, timeout: timeoutMs, ...(/^[\d.:]+$/.test(host) ? {} : { servername: host }) });
    const done = (yes: boolean) => {
      s.destroy();
      resolve(yes);
    };
    s.once('secureConnect', () => done(true));
    s.once('error', () => done(false));
    s.once('timeout', () => done(false));
  });
}

/** What a ws:// collector is told when its hub serves TLS. */
export function wantsWss(url: string): string {
  const wss = url.replace(/^ws:/, 'wss:');
  return `the hub at ${url} serves TLS: dial ${wss} with --hub-ca FILE (its certificate) or --hub-fingerprint SHA256 (\`tma hub tls --show\` on the hub prints both)`;
}

/** A connect error that a hub serving TLS causes for a plain dial. */
export const plainToTls = (url: string, e: Error | null): boolean =>
  url.startsWith('ws:') && e !== null && /socket hang up|ECONNRESET|Parse Error/i.test(`${e.message} ${(e as NodeJS.ErrnoException).code ?? ''}`);
