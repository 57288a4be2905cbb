// Slots shared by every hub (the `SlotBook` of http/act.ts), in the slots bucket: the first
// request of a slot creates its record with a compare-and-set, and a request of the same slot on
// any hub waits for that record's result instead of sending a second frame. A record whose first
// request learnt nothing is deleted, so the next ask goes to the host, whose own record of the
// slot then answers. Without NATS the book steps aside: the host's record still holds.

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

export class KvSlotBook implements SlotBook {
  constructor(
    private readonly kv: KV,
    private readonly hubId: string,
    private readonly clock: () => number,
  ) {}

  private async create(key: string): Promise<boolean> {
    const w: SlotWire = { hub: this.hubId, at_ms: this.clock(), result: null };
    try {
      await this.kv.create(key, JSON.stringify(w));
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
          const w = e.json<SlotWire>();
          if (w.result) return { kind: 'result', result: w.result };
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
    await (result ? this.kv.put(key, JSON.stringify(w)) : this.kv.delete(key)).catch(() => undefined);
  }
}
