// Who a hub is on NATS. A hub's id names the subject it answers requests on (`tma.act.<id>`) and
// its liveness key; its inbox prefix is where every reply to it arrives (requests, KV puts, watch
// deliveries). When the hub signs in as a NATS user, both start with that user's name, so the
// server can give each user exactly its own: subscribe to `tma.act.<user>.>` and
// `_INBOX.<user>.>` and nothing else (deploy/nats/tma-account.conf). Without a user (an open NATS
// on loopback) the id is the machine's name and a random suffix, as before.

import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { NatsConfig } from '../config/config.js';

/** A subject token: no dots, wildcards or spaces, so a name cannot reach into another's subjects. */
const token = (s: string, max: number): string => s.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, max) || '_';

/** The `name` a creds file's user JWT carries (what a template's `{{name()}}` is), or null. */
export function credsUserName(creds: string): string | null {
  const m = /-----BEGIN NATS USER JWT-----\s*([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]*)\s*-+END NATS USER JWT-+/.exec(creds);
  if (!m) return null;
  try {
    const claims = JSON.parse(Buffer.from(m[2]!, 'base64url').toString('utf8')) as { name?: unknown };
    return typeof claims.name === 'string' && claims.name !== '' ? claims.name : null;
  } catch {
    return null;
  }
}

/** The NATS user this hub signs in as, as one subject token; null when it signs in as nobody. */
export function hubScope(cfg: Pick<NatsConfig, 'user'>, credsText?: string): string | null {
  if (cfg.user) return token(cfg.user.name, 64);
  const n = credsText === undefined ? null : credsUserName(credsText);
  return n === null ? null : token(n, 64);
}

/** `<user>.<machine>-<random>`, or `<machine>-<random>` without a user: unique per hub process. */
export function makeHubId(scope: string | null, machine = hostname()): string {
  const own = `${token(machine, 40)}-${randomBytes(4).toString('hex')}`;
  return scope === null ? own : `${scope}.${own}`;
}

/** Where replies to this hub arrive: `_INBOX.<user>` under a user, the client's default otherwise. */
export const inboxPrefix = (scope: string | null): string | undefined => (scope === null ? undefined : `_INBOX.${scope}`);
