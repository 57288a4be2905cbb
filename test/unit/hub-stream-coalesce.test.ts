import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { HubMetrics } from '../../hub/metrics.js';
import { recordingSink } from '../support/recording-sink.js';
import type { FleetStore } from '../../hub/store/fleet-store.js';
import { StreamHub } from '../../hub/http/streams.js';
import { EMPTY_SELECTOR } from '../../shared/selectors.js';

/** A store whose document is a counter, bumped by `change()`. */
function fakeStore() {
  let version = 0;
  const listeners = new Set<() => void>();
  const store = {
    onChange: (cb: () => void) => (listeners.add(cb), () => listeners.delete(cb)),
    document: () => ({ schema: 1, agents: [], hosts: [], version }),
    documentBytes: () => Buffer.from(JSON.stringify(store.document())),
    documentParts: () => [store.documentBytes()],
    setJournaling: () => {},
    // Every change names a host, so a documents reader is sent the document again.
    takeChanges: () => ({ rows: [], hosts: ['h'] }),
  };
  return {
    store: store as unknown as FleetStore,
    change: () => {
      version++;
      listeners.forEach((cb) => cb());
    },
  };
}

describe('stream coalescing', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('the first change after a quiet spell goes out at once; what follows within the spell waits for its end, as one', () => {
    const { store, change } = fakeStore();
    const hub = new StreamHub(store, { coalesceMs: 50, keepaliveMs: 60_000, logger: pino({ level: 'silent' }), metrics: new HubMetrics() });
    const written: string[] = [];
    hub.add(() => recordingSink(written), EMPTY_SELECTOR, false);
    expect(written).toHaveLength(1); // the document on joining

    change();
    vi.advanceTimersByTime(0);
    expect(written).toHaveLength(2);
    expect(JSON.parse(written[1]!).version).toBe(1);

    // A burst inside the spell: nothing until it ends, then one document with the latest state.
    for (let i = 0; i < 5; i++) change();
    vi.advanceTimersByTime(49);
    expect(written).toHaveLength(2);
    vi.advanceTimersByTime(1);
    expect(written).toHaveLength(3);
    expect(JSON.parse(written[2]!).version).toBe(6);

    // Quiet for a whole spell: the next change is immediate again.
    vi.advanceTimersByTime(50);
    change();
    vi.advanceTimersByTime(0);
    expect(written).toHaveLength(4);
    hub.close();
  });
});
