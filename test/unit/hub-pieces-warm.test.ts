// A full read assembles the fleet from per-host pieces. Encoding a changed host's pieces was left
// to the next read, so at 1,000 updates/s a read first re-encoded most of the fleet. The store now
// encodes what changed ahead of the read (`prepare`), driven by the hub's warmer.

import { afterEach, describe, expect, it, vi } from 'vitest';
import { warmPieces } from '../../hub/store/warmer.js';
import * as pieces from '../../hub/store/pieces.js';
import { MemoryFleetStore as FleetStore } from '../../hub/store/memory-store.js';
import { EMPTY_SELECTOR } from '../../shared/selectors.js';
import { EPOCH_A, SERVER, protoRow } from '../support/hub-fake-collector.js';
import { STATES, rng, seedHosts } from '../support/seeded-store.js';

vi.mock('../../hub/store/pieces.js', async (original) => {
  const m = await original<typeof import('../../hub/store/pieces.js')>();
  return { ...m, buildPieces: vi.fn(m.buildPieces) };
});
const built = vi.mocked(pieces.buildPieces);

/** A store of `n` hosts with 4 rows each, and a function that changes one row of a random host. */
function fleet(n: number, clock: () => number) {
  const store = new FleetStore({ clock });
  const hosts = Array.from({ length: n }, (_, i) => `h${i}`);
  const { owners, seqs } = seedHosts(store, hosts, 4);
  const r = rng(5);
  const change = (step: number): void => {
    const h = hosts[Math.floor(r() * hosts.length)]!;
    const o = owners.get(h)!;
    const seq = seqs.get(h)! + 1;
    seqs.set(h, seq);
    const pane = `%${Math.floor(r() * 6)}`;
    const removals = r() < 0.15 ? [`%${Math.floor(r() * 6)}`] : [];
    const upserts = removals.length ? [] : [protoRow({ pane, locator: `s:${pane.slice(1)}.0`, state: STATES[Math.floor(r() * 4)], tokens: step })];
    store.applyDelta(h, o, { epoch: EPOCH_A, seq, server: SERVER, incarnation: 'i', upserts, removals });
    if (r() < 0.2) store.noteHeartbeat(h, o, clock(), seq);
  };
  return { store, change };
}

const stops: (() => void)[] = [];
afterEach(() => {
  for (const s of stops.splice(0)) s();
});

describe('prepared fleet pieces', () => {
  it('a read after prepare encodes no host again, and is still the JSON of the document', () => {
    let now = 1_000;
    const { store, change } = fleet(40, () => now);
    const r = rng(9);
    for (let step = 0; step < 300; step++) {
      now += Math.floor(r() * 30);
      for (let k = Math.floor(r() * 4); k >= 0; k--) change(step);
      store.prepare();
      built.mockClear();
      const bytes = Buffer.concat(store.documentParts());
      expect(built).not.toHaveBeenCalled();
      expect(bytes.toString('utf8')).toBe(JSON.stringify(store.document()));
      const one = { ...EMPTY_SELECTOR, host: `h${step % 40}` };
      expect(store.documentText(one)).toBe(JSON.stringify(store.document(one)));
    }
  });

  it('without prepare a read still builds what changed (prepare only moves the work)', () => {
    const { store, change } = fleet(10, () => 1_000);
    store.prepare();
    for (let step = 0; step < 20; step++) change(step);
    built.mockClear();
    expect(store.documentText()).toBe(JSON.stringify(store.document()));
    expect(built).toHaveBeenCalled();
  });

  it("the hub's warmer encodes changed hosts soon after they change, so the next read does not", async () => {
    const { store, change } = fleet(30, () => 1_000);
    stops.push(warmPieces(store, 5));
    store.noteFullRead();
    for (let round = 0; round < 5; round++) {
      for (let step = 0; step < 10; step++) change(round * 10 + step);
      built.mockClear();
      // The warmer's timer runs on the loop: wait (generously, the machine may be loaded) for it to build.
      const deadline = Date.now() + 10_000;
      while (built.mock.calls.length === 0 && Date.now() < deadline) await new Promise((res) => setTimeout(res, 5));
      expect(built).toHaveBeenCalled();
      built.mockClear();
      expect(store.documentText()).toBe(JSON.stringify(store.document()));
      expect(built).not.toHaveBeenCalled();
    }
  }, 60_000);

  it('warms only while full reads are asked for: a hub nobody reads encodes nothing ahead', async () => {
    let now = 1_000;
    const { store, change } = fleet(20, () => now);
    stops.push(warmPieces(store, 5, 1_000));
    const settle = async (): Promise<void> => {
      // Long enough for several warmer turns; when none was due this proves nothing went.
      const until = Date.now() + 100;
      while (Date.now() < until) await new Promise((res) => setTimeout(res, 5));
    };
    // Never read (a stream's document does not count): changes are left for the first read.
    store.documentParts();
    for (let step = 0; step < 10; step++) change(step);
    built.mockClear();
    await settle();
    expect(built).not.toHaveBeenCalled();
    // Read once: the changes after it are warmed.
    store.noteFullRead();
    for (let step = 10; step < 20; step++) change(step);
    built.mockClear();
    const deadline = Date.now() + 10_000;
    while (built.mock.calls.length === 0 && Date.now() < deadline) await new Promise((res) => setTimeout(res, 5));
    expect(built).toHaveBeenCalled();
    // A minute of store clock later (here a second) nobody has read since: warming stops.
    now += 1_001;
    await settle();
    for (let step = 20; step < 30; step++) change(step);
    built.mockClear();
    await settle();
    expect(built).not.toHaveBeenCalled();
    expect(store.documentText()).toBe(JSON.stringify(store.document()));
  }, 60_000);
});
