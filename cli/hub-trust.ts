// `--hub-ca FILE` / `--hub-fingerprint SHA256` read once for a verb that dials a hub: the
// collector's WebSocket and the fleet verbs' HTTP client take the same answer (shared/hub-tls.ts).

import { checkTrust, hubTlsOptions, type HubTlsOptions } from '../shared/hub-tls.js';
import { UsageError, type Parsed } from './args.js';
import { ExitError } from './local.js';

/** A function giving the TLS options per dial, or null when nothing beyond the system roots is trusted. */
export function hubTrustOf(p: Parsed, url: URL): (() => Promise<HubTlsOptions>) | null {
  const caFile = p.globals['hub-ca'];
  const fingerprint = p.globals['hub-fingerprint'];
  if (caFile === undefined && fingerprint === undefined) return null;
  if (url.protocol !== 'https:' && url.protocol !== 'wss:') {
    throw new UsageError(
      `--hub-${caFile !== undefined ? 'ca' : 'fingerprint'} is for a hub with TLS: --hub ${url.protocol === 'ws:' ? 'wss' : 'https'}://${url.host}`,
    );
  }
  const given = { ...(caFile !== undefined ? { caFile } : {}), ...(fingerprint !== undefined ? { fingerprint } : {}) };
  try {
    checkTrust(given);
  } catch (e) {
    throw new ExitError((e as Error).message, 2);
  }
  // Read again at every dial: a renewed certificate copied over the CA file is trusted from the
  // collector's next reconnect, without a restart.
  return async () => hubTlsOptions(url, checkTrust(given));
}
