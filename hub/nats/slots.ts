// Slots shared by every hub (the `SlotBook` of http/act.ts), in the slots bucket: the first
// request of a slot creates its record with a compare-and-set, and a request of the same slot on
// any hub waits for that record's result instead of sending a second frame. A record whose first
// request learnt nothing is deleted, so the next ask goes to the host, whose own record of the
// slot then answers. Without NATS the book steps aside: the host's record still holds.
//
// A record carries a MAC with the fleet's row key (`m`, over the key and the record): a result
// anyone else put in the bucket would otherwise be handed to a caller as what the host did, with
// nothing sent. A record that does not verify is treated as no result (the ask goes to the host,
// whose own record of the slot answers) and counted.

import { createHmac, timingSafeEqual } from 'node:crypto';
import type { KV } from '@nats-io/kv';
import type { ActResult } from '../../shared/protocol.js';
import type { SlotBook } from '../http/act.js';
import { slotKey } from './keys.js';

interface SlotWire {
  hub: string;
  at_ms: number;
  result: ActResult | null;
}

const POLL_MS = 50;

// A domain tag of its own, so no row's or status's MAC passes for a slot's.
const macOf = (key: Buffer, kvKey: string, w: SlotWire): string =>
  createHmac('sha256', key)
    .update(JSON.stringify(['slot', kvKey, w.hub, w.at_ms, w.result]))
    .digest('base64url');

/** The record's text, sealed. */
export function sealSlot(key: Buffer, kvKey: string, w: SlotWire): string {
  return JSON.stringify({ ...w, m: macOf(key, kvKey, w) });
}

/** The record, when it verifies; null otherwise. */
export function checkSlot(key: Buffer, kvKey: string, text: string): SlotWire | null {
  let w: Partial<SlotWire> & { m?: unknown };
  try {
    w = JSON.parse(text) as Partial<SlotWire> & { m?: unknown };
  } catch {
    return null;
  }
  if (typeof w !== 'object' || w === null || typeof w.m !== 'string' || typeof w.hub !== 'string' || typeof w.at_ms !== 'number') return null;
  const rec: SlotWire = { hub: w.hub, at_ms: w.at_ms, result: w.result ?? null };
  const want = Buffer.from(macOf(key, kvKey, rec));
  const got = Buffer.from(w.m);
  return got.length === want.length && timingSafeEqual(got, want) ? rec : null;
}

export class KvSlotBook implements SlotBook {
  /** Records read that did not verify (for `/healthz`). */
  refused = 0;

  constructor(
    private readonly kv: KV,
    private readonly hubId: string,
    private readonly clock: () => number,
    /** The fleet's row key (fleet-keys.ts). */
    private readonly key: Buffer,
  ) {}

  private async create(key: string): Promise<boolean> {
    const w: SlotWire = { hub: this.hubId, at_ms: this.clock(), result: null };
    try {
      await this.kv.create(key, sealSlot(this.key, key, w));
      return true;
    } catch (e) {
      if (/wrong last sequence|key exists/i.test((e as Error).message)) return false;
      throw e;
    }
  }

  async begin(host: string, slot: string, waitMs: number): Promise<{ kind: 'first' } | { kind: 'result'; result: ActResult }> {
    const key = slotKey(host, slot);
    const until = this.clock() + waitMs;
    try {
      while (!(await this.create(key))) {
        const e = await this.kv.get(key);
        if (e && e.operation === 'PUT') {
          const w = checkSlot(this.key, key, e.string());
          if (w === null) this.refused++;
          // One that does not verify is no answer: waited out, then asked of the host.
          else if (w.result) return { kind: 'result', result: w.result };
        }
        // Still being fetched: wait for it, but never longer than an act may take.
        if (this.clock() >= until) return { kind: 'first' };
        await new Promise((r) => setTimeout(r, POLL_MS));
      }
    } catch {
      return { kind: 'first' };
    }
    return { kind: 'first' };
  }

  async finish(host: string, slot: string, result: ActResult | null): Promise<void> {
    const key = slotKey(host, slot);
    const w: SlotWire = { hub: this.hubId, at_ms: this.clock(), result };
    await (result ? this.kv.put(key, sealSlot(this.key, key, w)) : this.kv.delete(key)).catch(() => undefined);
  }
}
