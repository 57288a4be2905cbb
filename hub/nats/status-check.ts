// Every host status a hub reads from the hosts bucket is checked before it is used, as rows are
// (row-check.ts): a status says whether a host is reachable, which servers its rows belong to,
// which actions its policy allows and what its collector announced, and every follower shows and
// acts on it. Anyone who could write to NATS could otherwise mark a dead host fresh, widen what
// it allows, or hide it. The owning hub adds a MAC (`m`), with the fleet's row key, over the key
// and the status; a status without one that verifies is refused and counted, and the host keeps
// the last status that did verify. Pure: the store counts and logs what is refused.

import { createHmac, timingSafeEqual } from 'node:crypto';
import { parseHostKey } from './keys.js';
import type { HostWire } from './wire.js';

/** A status as the owning hub writes it: the wire and its MAC, last. */
export type SealedHostWire = HostWire & { m: string };

export type StatusCheck = { ok: true; host: string; wire: HostWire } | { ok: false; reason: string };

// A domain tag of its own: a row's MAC (same key) can never pass for a status's.
const macOf = (key: Buffer, kvKey: string, wire: unknown): string =>
  createHmac('sha256', key)
    .update(JSON.stringify(['host status', kvKey, wire]))
    .digest('base64url');

export function sealStatus(key: Buffer, kvKey: string, wire: HostWire): SealedHostWire {
  return { ...wire, m: macOf(key, kvKey, wire) };
}

const dec = new TextDecoder();

export function checkStatus(key: Buffer, kvKey: string, value: Uint8Array): StatusCheck {
  const k = parseHostKey(kvKey);
  if (!k || k.kind !== 's') return { ok: false, reason: 'key is not s.<host>' };
  let w: unknown;
  try {
    w = JSON.parse(dec.decode(value));
  } catch {
    return { ok: false, reason: 'value is not JSON' };
  }
  if (typeof w !== 'object' || w === null || Array.isArray(w)) return { ok: false, reason: 'value is not an object' };
  // The rest keeps the writer's key order, so it stringifies as it was sealed.
  const { m, ...wire } = w as Record<string, unknown>;
  if (typeof m !== 'string') return { ok: false, reason: 'status carries no fleet MAC (written by a hub without the fleet key?)' };
  const want = Buffer.from(macOf(key, kvKey, wire));
  const got = Buffer.from(m);
  if (got.length !== want.length || !timingSafeEqual(got, want)) return { ok: false, reason: 'status MAC does not verify with the fleet key' };
  if (wire.v !== 1 || typeof wire.hub !== 'string' || !Array.isArray(wire.servers) || !Array.isArray(wire.actionsAllowed))
    return { ok: false, reason: 'status is not a v1 host status' };
  return { ok: true, host: k.host, wire: wire as unknown as HostWire };
}
