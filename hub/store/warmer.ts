// Keeps the store's per-host pieces encoded as changes arrive (FleetWarming.prepare), a batch every
// few milliseconds rather than per frame, so a full read finds them ready. The cost is the
// encoding the read would otherwise do, spread out: about one host re-encoded per delta frame
// (some 30–80 µs at 20 rows), so it runs only while `GET /v1/agents` is being asked, for a
// minute after the last one; a hub nobody reads that way pays nothing (stream readers joining do
// not count: they are rare), and its first read encodes what changed.

import type { FleetReads, FleetWarming } from './fleet-store.js';

/** How long changes gather before their hosts are encoded; a read meets at most this much undone. */
export const WARM_EVERY_MS = 25;

/** Warming goes on this long after the last full read. */
export const WARM_AFTER_READ_MS = 60_000;

/** Start warming; returns the stop function. */
export function warmPieces(store: Pick<FleetReads, 'onChange'> & FleetWarming, everyMs = WARM_EVERY_MS, afterReadMs = WARM_AFTER_READ_MS): () => void {
  let timer: NodeJS.Timeout | null = null;
  const off = store.onChange(() => {
    if (timer || !store.readWithin(afterReadMs)) return;
    timer = setTimeout(() => {
      timer = null;
      store.prepare();
    }, everyMs);
  });
  return () => {
    off();
    if (timer) clearTimeout(timer);
    timer = null;
  };
}
