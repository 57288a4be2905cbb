// A fleet store filled with hosts that said hello and sent one snapshot, for unit tests that then
// move it at random (a seeded source, so a failure replays).

import type { FleetStore } from '../../hub/store/fleet-store.js';
import type { State } from '../../shared/tokens.js';
import { EPOCH_A, SERVER, protoRow } from './hub-fake-collector.js';

export const STATES: State[] = ['blocked', 'working', 'idle', 'unknown'];

/** Deterministic numbers in [0, 1). */
export function rng(seed: number): () => number {
  let x = seed;
  return () => (x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
}

/** Each host says hello over ws and sends `rowsEach` rows; its link owner and last seq, by host. */
export function seedHosts(store: FleetStore, hosts: readonly string[], rowsEach: number): { owners: Map<string, object>; seqs: Map<string, number> } {
  const owners = new Map<string, object>();
  const seqs = new Map<string, number>();
  for (const h of hosts) {
    const o = {};
    owners.set(h, o);
    store.hello(h, { transport: 'ws', epoch: EPOCH_A, collectorVersion: '1', actionsAllowed: [] }, o);
    const rows = Array.from({ length: rowsEach }, (_, i) => protoRow({ pane: `%${i}`, locator: `s:${i}.0` }));
    store.applySnapshot(h, o, { epoch: EPOCH_A, seq: 1, complete: true, servers: [{ server: SERVER, incarnation: 'i', rows }] });
    seqs.set(h, 1);
  }
  return { owners, seqs };
}
