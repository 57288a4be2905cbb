import { describe, expect, it } from 'vitest';
import { rowEntry, rowText } from '../../hub/store/pieces.js';
import { MemoryFleetStore as FleetStore } from '../../hub/store/memory-store.js';
import { fleetRowObject } from '../../shared/fleet.js';
import type { ProtocolRow } from '../../shared/row.js';
import { EMPTY_SELECTOR } from '../../shared/selectors.js';
import { EPOCH_A, SERVER, protoRow } from '../support/hub-fake-collector.js';
import { STATES, rng, seedHosts } from '../support/seeded-store.js';

describe('fleet store text', () => {
  it("a row's text is its fleet form's JSON, whatever the order, gaps or extras of what arrived", () => {
    const base = protoRow({ pane: '%1', prompt_id: 'p1' }) as unknown as Record<string, unknown>;
    const reversed = Object.fromEntries(Object.entries(base).reverse());
    const { prompt_id: _gone, ...withoutPrompt } = base;
    const variants: Record<string, unknown>[] = [
      base,
      reversed,
      withoutPrompt,
      { ...base, prompt_id: undefined },
      { ...base, newer_key: 1 },
      { ...base, detail: 'é"\\\n' },
    ];
    for (const v of variants) {
      const row = v as unknown as ProtocolRow;
      for (const stale of [false, true]) expect(rowText(rowEntry(row), stale)).toBe(JSON.stringify(fleetRowObject(row, stale)));
    }
  });

  it('stays the JSON of the document while frames, heartbeats and deltas move clocks, rows and counts', () => {
    let now = 1_000;
    const store = new FleetStore({ clock: () => now });
    const hosts = ['b', 'a', 'c'];
    const { owners, seqs } = seedHosts(store, hosts, 3);
    const r = rng(11);
    for (let step = 0; step < 400; step++) {
      now += Math.floor(r() * 50);
      const h = hosts[Math.floor(r() * hosts.length)]!;
      const o = owners.get(h)!;
      const k = r();
      store.touch(h, o);
      if (k < 0.3) store.noteHeartbeat(h, o, now - Math.floor(r() * 40) + 10, seqs.get(h));
      else if (k < 0.8) {
        const seq = seqs.get(h)! + 1;
        seqs.set(h, seq);
        const pane = `%${Math.floor(r() * 5)}`;
        const removals = r() < 0.2 ? [`%${Math.floor(r() * 5)}`] : [];
        const upserts = removals.length ? [] : [protoRow({ pane, locator: `s:${pane.slice(1)}.0`, state: STATES[Math.floor(r() * 4)], tokens: step })];
        store.applyDelta(h, o, { epoch: EPOCH_A, seq, server: SERVER, incarnation: 'i', upserts, removals });
      }
      expect(store.documentText()).toBe(JSON.stringify(store.document()));
      const one = { ...EMPTY_SELECTOR, host: h };
      expect(store.documentText(one)).toBe(JSON.stringify(store.document(one)));
      expect(Buffer.concat(store.documentParts()).equals(store.documentBytes())).toBe(true);
    }
    // The clocks did move into the text (the cut status is filled in, not frozen).
    expect(store.documentText()).toContain(`"last_seen_ms":${now}`);
  });
});
