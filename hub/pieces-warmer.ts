// Keeps the store's per-host pieces encoded as changes arrive (FleetStore.prepare), a batch every
// few milliseconds rather than per frame, so a full read finds them ready. The cost is the same
// encoding the read would otherwise do, spread out: about one host re-encoded per delta frame.

import type { FleetStore } from './store.js';

/** How long changes gather before their hosts are encoded; a read meets at most this much undone. */
export const WARM_EVERY_MS = 25;

/** Start warming; returns the stop function. */
export function warmPieces(store: FleetStore, everyMs = WARM_EVERY_MS): () => void {
  let timer: NodeJS.Timeout | null = null;
  const off = store.onChange(() => {
    if (timer) return;
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
