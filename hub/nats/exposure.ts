// Whether a hub may use the NATS it reached. Reaching NATS is reaching the fleet: its rows, its
// claims, and the subjects hubs send keys to terminals on. A NATS server off this machine that asks
// for no credentials lets anyone who can reach it do the same, so a hub refuses it unless told
// `allow_unauthenticated = true`; one reached in clear off this machine sends the hub's password
// and every row over the network, so that is refused too unless told `allow_plaintext = true`.

/** Loopback hosts: nothing said to NATS on them leaves the machine. */
export function onLoopback(server: string): boolean {
  let host: string;
  try {
    host = new URL(server.replace(/^(nats|tls):/, 'http:')).hostname;
  } catch {
    return false;
  }
  return host === 'localhost' || host === '[::1]' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

export interface Exposure {
  servers: string[];
  /** The server said so in its INFO: no client gets in without credentials. */
  authRequired: boolean;
  /** The connection is TLS (tls:// servers, tls_ca_file, or a server that requires it). */
  tls: boolean;
  allowUnauthenticated: boolean;
  allowPlaintext: boolean;
}

/** One line saying why the hub will not start on this NATS, or null when it may. */
export function exposureRefusal(e: Exposure): string | null {
  const off = e.servers.filter((s) => !onLoopback(s));
  if (off.length === 0) return null;
  if (!e.authRequired && !e.allowUnauthenticated) {
    return `NATS at ${off.join(', ')} is off this machine and asks no credentials, so anyone reaching it can act as a hub: give it users (deploy/nats/tma-account.conf) and set [nats] user/password_file or creds_file, or set allow_unauthenticated = true to accept that`;
  }
  if (!e.tls && !e.allowPlaintext) {
    return `NATS at ${off.join(', ')} is off this machine and reached without TLS: set [nats] tls_ca_file (or tls:// servers), or set allow_plaintext = true to accept that`;
  }
  return null;
}
