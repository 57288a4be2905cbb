// A renewal whose reply is lost (timed out at the client, landed at the server) must not make the
// hub think another hub took the host: the fault behind the spurious takeovers of issue 32.
import { describe, expect, it } from 'vitest';
import pino from 'pino';
import type { KV } from '@nats-io/kv';
import { Leases } from '../../hub/nats/leases.js';
import { when } from '../support/when.js';

/** A KV holding one key per name with revisions; `loseReplies` makes updates land but throw. */
function fakeKv() {
  const keys = new Map<string, { value: string; revision: number }>();
  let seq = 0;
  const state = { loseReplies: 0, replyDelayMs: 0 };
  const entry = (k: string) => {
    const e = keys.get(k);
    return e && { operation: 'PUT', revision: e.revision, json: () => JSON.parse(e.value) };
  };
  const kv = {
    get: async (k: string) => entry(k) ?? null,
    create: async (k: string, v: string) => {
      if (keys.has(k)) throw new Error('wrong last sequence');
      keys.set(k, { value: v, revision: ++seq });
      return seq;
    },
    update: async (k: string, v: string, rev: number) => {
      if (keys.get(k)?.revision !== rev) throw new Error('wrong last sequence: 1');
      keys.set(k, { value: v, revision: ++seq });
      if (state.replyDelayMs) await new Promise((r) => setTimeout(r, state.replyDelayMs));
      if (state.loseReplies > 0) {
        state.loseReplies--;
        throw new Error('TIMEOUT');
      }
      return seq;
    },
    delete: async (k: string) => void keys.delete(k),
  };
  return { kv: kv as unknown as KV, state, keys };
}

describe('Leases', () => {
  it('keeps a host whose renewal landed but whose reply was lost', async () => {
    const { kv, state, keys } = fakeKv();
    const lost: string[] = [];
    const leases = new Leases(kv, 'hub-a', 300, Date.now, pino({ level: 'silent' }), (h) => lost.push(h));
    try {
      expect(await leases.claim('h1')).toBe(true);
      state.loseReplies = 1;
      const rev = () => [...keys.values()][0]!.revision;
      const first = rev();
      // Several renewals past the lost reply, each 100 ms apart.
      await when('four renewals', () => (rev() >= first + 4 ? true : undefined), 3_000, 20);
      expect(lost).toEqual([]);
      expect(leases.holds('h1')).toBe(true);
    } finally {
      leases.close();
    }
  });

  it('keeps a host whose renewal replies come slower than the renewal interval', async () => {
    const { kv, state, keys } = fakeKv();
    const lost: string[] = [];
    const leases = new Leases(kv, 'hub-a', 300, Date.now, pino({ level: 'silent' }), (h) => lost.push(h));
    try {
      expect(await leases.claim('h1')).toBe(true);
      state.replyDelayMs = 250; // a loaded hub or a slow NATS: renewals every 100 ms overlap
      const rev = () => [...keys.values()][0]!.revision;
      const first = rev();
      await when('three renewals', () => (rev() >= first + 3 ? true : undefined), 3_000, 20);
      expect(lost).toEqual([]);
      expect(leases.holds('h1')).toBe(true);
    } finally {
      leases.close();
    }
  });
});
