// `--hub-ca FILE` / `--hub-fingerprint SHA256` read once for a verb that dials a hub: the
// collector's WebSocket and the fleet verbs' HTTP client take the same answer (shared/hub-tls.ts).
// The fleet verbs also read `TMA_HUB_CA` / `TMA_HUB_FINGERPRINT`, so a shell that exports them
// (and every `tma` a view runs as a child) trusts the hub without repeating the flags.

import { checkTrust, hubTlsOptions, type HubTlsOptions, type HubTrust } from '../shared/hub-tls.js';
import { UsageError, type Parsed } from './args.js';
import { ExitError } from './local.js';

/**
 * The trust as given: the flags, else (with `env`) the environment. Either flag replaces both
 * variables, so an exported pin never clashes with a `--hub-ca` typed for one command.
 */
export function hubTrustGiven(p: Parsed, env?: NodeJS.ProcessEnv): { trust: HubTrust; from: 'flag' | 'env' } | null {
  const caFile = p.globals['hub-ca'];
  const fingerprint = p.globals['hub-fingerprint'];
  if (caFile !== undefined || fingerprint !== undefined) {
    return { trust: { ...(caFile !== undefined ? { caFile } : {}), ...(fingerprint !== undefined ? { fingerprint } : {}) }, from: 'flag' };
  }
  const envCa = env?.TMA_HUB_CA || undefined;
  const envPin = env?.TMA_HUB_FINGERPRINT || undefined;
  if (envCa === undefined && envPin === undefined) return null;
  return { trust: { ...(envCa !== undefined ? { caFile: envCa } : {}), ...(envPin !== undefined ? { fingerprint: envPin } : {}) }, from: 'env' };
}

/** The flags' words in a complaint about the environment's values. */
const asEnv = (message: string) => message.replaceAll('--hub-ca', 'TMA_HUB_CA').replaceAll('--hub-fingerprint', 'TMA_HUB_FINGERPRINT');

/**
 * A function giving the TLS options per dial, or null when nothing beyond the system roots is
 * trusted. With `env` (the fleet verbs), `TMA_HUB_CA`/`TMA_HUB_FINGERPRINT` stand in for absent
 * flags; they are ambient, so a plain-HTTP hub ignores them where it refuses the flags.
 */
export function hubTrustOf(p: Parsed, url: URL, env?: NodeJS.ProcessEnv): (() => Promise<HubTlsOptions>) | null {
  const given = hubTrustGiven(p, env);
  if (given === null) return null;
  const tlsUrl = url.protocol === 'https:' || url.protocol === 'wss:';
  if (!tlsUrl) {
    if (given.from === 'env') return null;
    throw new UsageError(
      `--hub-${given.trust.caFile !== undefined ? 'ca' : 'fingerprint'} is for a hub with TLS: --hub ${url.protocol === 'ws:' ? 'wss' : 'https'}://${url.host}`,
    );
  }
  const check = () => {
    try {
      return checkTrust(given.trust);
    } catch (e) {
      throw new Error(given.from === 'env' ? asEnv((e as Error).message) : (e as Error).message);
    }
  };
  try {
    check();
  } catch (e) {
    throw new ExitError((e as Error).message, 2);
  }
  // Read again at every dial: a renewed certificate copied over the CA file is trusted from the
  // collector's next reconnect, without a restart.
  return async () => hubTlsOptions(url, check());
}
