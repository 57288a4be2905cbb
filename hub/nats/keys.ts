// Keys in the fleet's buckets. A NATS KV key is a subject: dots split tokens and only
// `[-/_=.A-Za-z0-9]` may appear, while host names hold dots and servers and panes hold `/`, `%`
// and anything else. Every name is one token of unpadded base64url behind a `k`, so no name can
// split a key or escape its prefix, and the empty name is a token too.

import { createHash } from 'node:crypto';

export const ROWS_BUCKET = 'tma-rows';
/** Host statuses (`s.<host>`), owner claims (`o.<host>`) and hub liveness (`l.<hub>`): one bucket, so one watch sees them in order. */
export const HOSTS_BUCKET = 'tma-hosts';
export const SLOTS_BUCKET = 'tma-slots';
/** Accepted notifications, one message each, deduplicated by the notification's id. */
export const NOTIFY_STREAM = 'tma-notify';
export const NOTIFY_SUBJECT = 'tma.notify';
/** How far each notification got with each sink (`<sink>.<notification>`), read by every hub. */
export const NOTIFY_OUT_BUCKET = 'tma-notify-out';
/** Where hubs before the fleet secret kept the action-link key in clear: no longer read or made. */
export const ACTION_KEY_BUCKET = 'tma-action-key';
/** Used action-link nonces (`n.<nonce>`): the first create() of one wins, on any hub. */
export const NONCE_BUCKET = 'tma-action-nonces';

export function encodeToken(name: string): string {
  return 'k' + Buffer.from(name, 'utf8').toString('base64url');
}

export function decodeToken(token: string): string | null {
  if (!token.startsWith('k') || !/^k[A-Za-z0-9_-]*$/.test(token)) return null;
  return Buffer.from(token.slice(1), 'base64url').toString('utf8');
}

export const rowKey = (host: string, server: string, pane: string): string => `${encodeToken(host)}.${encodeToken(server)}.${encodeToken(pane)}`;
export const hostRowsFilter = (host: string): string => `${encodeToken(host)}.>`;
export const statusKey = (host: string): string => `s.${encodeToken(host)}`;
export const ownerKey = (host: string): string => `o.${encodeToken(host)}`;
/** A hub's liveness key: its claims stand while this does. */
export const livenessKey = (hubId: string): string => `l.${encodeToken(hubId)}`;
export const slotKey = (host: string, slot: string): string => `${encodeToken(host)}.${encodeToken(slot)}`;
/** A notification id (JSON, any characters) as one key token and `Nats-Msg-Id`. */
export const notifyIdToken = (id: string): string => createHash('sha256').update(id).digest('base64url').slice(0, 32);
export const notifyOutKey = (sink: string, id: string): string => `${encodeToken(sink)}.${notifyIdToken(id)}`;
export const nonceKey = (nonce: string): string => `n.${encodeToken(nonce)}`;
/** A durable consumer name (no dots, spaces or wildcards) for a sink, the same on every hub. */
export const sinkConsumer = (sink: string): string => `sink-${createHash('sha256').update(sink).digest('hex').slice(0, 24)}`;
/** The subject a hub answers requests (act, mute, preview) on for the hosts it holds; named for
 * acts, the first of them, and kept so hubs of either version reach each other. */
export const routeSubject = (hubId: string): string => `tma.act.${hubId}`;

export function parseRowKey(key: string): { host: string; server: string; pane: string } | null {
  const t = key.split('.');
  if (t.length !== 3) return null;
  const [host, server, pane] = t.map(decodeToken);
  return host == null || server == null || pane == null ? null : { host, server, pane };
}

/** `s.<host>` or `o.<host>` of the hosts bucket, or `l.<hub>` (then `host` holds the hub's id). */
export function parseHostKey(key: string): { kind: 's' | 'o' | 'l'; host: string } | null {
  const m = /^([sol])\.(k[A-Za-z0-9_-]*)$/.exec(key);
  const host = m ? decodeToken(m[2]!) : null;
  return m && host !== null ? { kind: m[1] as 's' | 'o' | 'l', host } : null;
}
