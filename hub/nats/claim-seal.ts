// Claims (`o.<host>`) and hub liveness (`l.<hub>`) in the hosts bucket carry a MAC, with the
// fleet's row key, over their key and value, as rows and statuses do. Every hub acts on them: a
// claim says where a host's requests go and whether a second collector is refused, a liveness
// key says whether that hub's hosts are still fresh. Anyone who could write the bucket could
// otherwise keep a dead hub's hosts looking fresh, or point a host's requests at a subject of its
// own. A value that does not verify reads as none (so its owner writes its claim again), and is
// counted by the store.

import { createHmac, timingSafeEqual } from 'node:crypto';

export interface ValueSeal {
  /** The value's text, sealed. */
  seal(kvKey: string, w: object): string;
  /** The value when it verifies, else null (its MAC, `m`, taken off). */
  open(kvKey: string, text: string): unknown;
}

/** For a store without the fleet key (unit tests of the lease logic alone). */
export const UNSEALED: ValueSeal = { seal: (_k, w) => JSON.stringify(w), open: (_k, t) => JSON.parse(t) as unknown };

// A domain tag of its own: no row's, status's or slot's MAC passes for a claim's.
const macOf = (key: Buffer, kvKey: string, w: unknown): string =>
  createHmac('sha256', key)
    .update(JSON.stringify(['hosts bucket', kvKey, w]))
    .digest('base64url');

export function fleetSeal(key: Buffer): ValueSeal {
  return {
    seal: (kvKey, w) => JSON.stringify({ ...w, m: macOf(key, kvKey, w) }),
    open(kvKey, text) {
      let v: unknown;
      try {
        v = JSON.parse(text);
      } catch {
        return null;
      }
      if (typeof v !== 'object' || v === null || Array.isArray(v)) return null;
      const { m, ...w } = v as Record<string, unknown>;
      if (typeof m !== 'string') return null;
      const want = Buffer.from(macOf(key, kvKey, w));
      const got = Buffer.from(m);
      return got.length === want.length && timingSafeEqual(got, want) ? w : null;
    },
  };
}
