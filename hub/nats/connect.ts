// The hub's NATS connection and the fleet's buckets. Every hub opens the same buckets by name, so
// the first to start creates them and the rest find them. Right after a cluster forms, JetStream
// may refuse a placement for a moment ("no suitable peers"): creation is retried with backoff.

import { readFileSync } from 'node:fs';
import { connect, credsAuthenticator, type NatsConnection } from '@nats-io/transport-node';
import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConfig } from '../config/config.js';
import { withBackoff } from './retry.js';
import { exposureRefusal } from './exposure.js';
import { HOSTS_BUCKET, NONCE_BUCKET, NOTIFY_OUT_BUCKET, ROWS_BUCKET, SLOTS_BUCKET } from './keys.js';

export interface FleetBuckets {
  nc: NatsConnection;
  rows: KV;
  hosts: KV;
  slots: KV;
  /** Each notification's delivery per sink, and the used action-link nonces. */
  notifyOut: KV;
  nonces: KV;
}

/** How long a slot's recorded result is kept: longer than any caller retries an act. */
const SLOT_MAX_AGE_MS = 3_600_000;
/** As long as the notification stream keeps its messages (notify-stream.ts). */
export const NOTIFY_KEEP_MS = 7 * 24 * 3_600_000;
/** Longer than any action link lives (`action_ttl_secs` is at most a day): a used nonce outlives its link. */
const NONCE_MAX_AGE_MS = 25 * 3_600_000;

export function readCreds(file: string): Uint8Array {
  try {
    return readFileSync(file);
  } catch (e) {
    throw new Error(`nats.creds_file: cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}

/** `inbox`: this hub's reply prefix (hub-identity.ts), so a server can give each hub its own inboxes only. */
export async function connectFleet(cfg: NatsConfig, name: string, inbox?: string): Promise<FleetBuckets> {
  const nc = await connect({
    servers: cfg.servers,
    name,
    // A hub keeps trying for as long as it runs: losing NATS degrades it, it does not end it.
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
    pingInterval: 2000,
    maxPingOut: 2,
    // Without this the client builds two Error objects (for async stack traces) on every request,
    // i.e. on every KV write: 11.6% of a loaded hub's CPU in issue 32's profile.
    noAsyncTraces: true,
    ...(inbox ? { inboxPrefix: inbox } : {}),
    ...(cfg.credsFile ? { authenticator: credsAuthenticator(readCreds(cfg.credsFile)) } : {}),
    ...(cfg.user ? { user: cfg.user.name, pass: cfg.user.password } : {}),
    ...(cfg.tlsCaFile ? { tls: { caFile: cfg.tlsCaFile } } : {}),
  }).catch((e: unknown) => {
    throw new Error(`cannot reach NATS at ${cfg.servers.join(', ')}: ${(e as Error).message}`);
  });
  const info = nc.info;
  const refusal = exposureRefusal({
    servers: cfg.servers,
    authRequired: info?.auth_required === true,
    tls: cfg.tlsCaFile !== undefined || cfg.servers.every((s) => s.startsWith('tls://')) || info?.tls_required === true,
    allowUnauthenticated: cfg.allowUnauthenticated === true,
    allowPlaintext: cfg.allowPlaintext === true,
  });
  if (refusal) {
    await nc.close();
    throw new Error(refusal);
  }
  try {
    const kvm = new Kvm(nc);
    const until = Date.now() + 30_000;
    const bucket = (n: string, extra: object = {}) => withBackoff(`bucket ${n}`, () => kvm.create(n, { history: 1, replicas: cfg.replicas, ...extra }), until);
    const rows = await bucket(ROWS_BUCKET);
    const hosts = await bucket(HOSTS_BUCKET);
    const slots = await bucket(SLOTS_BUCKET, { ttl: SLOT_MAX_AGE_MS });
    const notifyOut = await bucket(NOTIFY_OUT_BUCKET, { ttl: NOTIFY_KEEP_MS });
    const nonces = await bucket(NONCE_BUCKET, { ttl: NONCE_MAX_AGE_MS });
    return { nc, rows, hosts, slots, notifyOut, nonces };
  } catch (e) {
    await nc.close();
    throw e;
  }
}
