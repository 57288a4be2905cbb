// Every row a hub reads from the rows bucket is checked before it is shown: anyone who can write
// to NATS could otherwise put any text in any pane of any host, and every follower would show it
// as what that pane asks. A row must parse as a protocol row (the collector wire's own schema),
// be bound to its key (the key's host, server and pane are the row's), and carry a MAC, with the
// fleet's row key, over the key, the writing hub, the incarnation and the row: only a hub given
// the fleet secret can write one. Pure: the store counts and logs what is refused.

import { createHmac, timingSafeEqual } from 'node:crypto';
import { protocolRowSchema } from '../../shared/row-schema.js';
import type { ProtocolRow } from '../../shared/row.js';
import { parseRowKey } from './keys.js';
import type { RowWire } from './wire.js';

/** A row as the owning hub writes it: the wire, the hub that wrote it (`h`) and the MAC (`m`). */
export interface SealedRowWire extends RowWire {
  h: string;
  m: string;
}

export type RowCheck =
  { ok: true; host: string; server: string; pane: string; incarnation: string; row: ProtocolRow; writer: string } | { ok: false; reason: string };

const macOf = (key: Buffer, kvKey: string, hub: string, incarnation: string, row: unknown): string =>
  createHmac('sha256', key)
    .update(JSON.stringify([kvKey, hub, incarnation, row]))
    .digest('base64url');

export function sealRow(key: Buffer, kvKey: string, hub: string, incarnation: string, row: ProtocolRow): SealedRowWire {
  return { i: incarnation, r: row, h: hub, m: macOf(key, kvKey, hub, incarnation, row) };
}

const dec = new TextDecoder();

export function checkRow(key: Buffer, kvKey: string, value: Uint8Array): RowCheck {
  const k = parseRowKey(kvKey);
  if (!k) return { ok: false, reason: 'key is not host.server.pane' };
  let w: Partial<SealedRowWire>;
  try {
    w = JSON.parse(dec.decode(value)) as Partial<SealedRowWire>;
  } catch {
    return { ok: false, reason: 'value is not JSON' };
  }
  if (typeof w !== 'object' || w === null) return { ok: false, reason: 'value is not an object' };
  if (typeof w.m !== 'string' || typeof w.h !== 'string') return { ok: false, reason: 'row carries no fleet MAC (written by a hub without the fleet key?)' };
  if (typeof w.i !== 'string') return { ok: false, reason: 'row has no incarnation' };
  const want = Buffer.from(macOf(key, kvKey, w.h, w.i, w.r));
  const got = Buffer.from(w.m);
  if (got.length !== want.length || !timingSafeEqual(got, want)) return { ok: false, reason: 'row MAC does not verify with the fleet key' };
  const parsed = protocolRowSchema.safeParse(w.r);
  if (!parsed.success)
    return { ok: false, reason: `row is not a protocol row: ${parsed.error.issues[0]?.path.join('.') ?? ''} ${parsed.error.issues[0]?.message ?? ''}`.trim() };
  // The row as written (its keys in the writer's order), now known to be a protocol row.
  const row = w.r as ProtocolRow;
  if (row.host !== k.host || row.server !== k.server || row.pane !== k.pane)
    return { ok: false, reason: 'row names another host, server or pane than its key' };
  return { ok: true, host: k.host, server: k.server, pane: k.pane, incarnation: w.i, row, writer: w.h };
}
