// The small pure pieces under the hub's ssh transport: redial delays, line framing, and the
// store's record of why a dialled host is unreachable.

import { describe, expect, it } from 'vitest';
import { backoffDelay } from '../../shared/backoff.js';
import { LineSplitter } from '../../hub/link/line-frames.js';
import { MemoryFleetStore as FleetStore } from '../../hub/store/memory-store.js';
import { EPOCH_A, SERVER, protoRow } from '../support/hub-fake-collector.js';

describe('backoffDelay', () => {
  const policy = { baseMs: 100, capMs: 1000 };
  const top = () => 0.999999;

  it('doubles the ceiling per attempt, from the base', () => {
    expect(backoffDelay(0, policy, top)).toBe(99);
    expect(backoffDelay(1, policy, top)).toBe(199);
    expect(backoffDelay(2, policy, top)).toBe(399);
  });

  it('stops growing at the cap: just under, at and over the attempt where it is reached', () => {
    expect(backoffDelay(3, policy, top)).toBe(799);
    expect(backoffDelay(4, policy, top)).toBe(999);
    expect(backoffDelay(5, policy, top)).toBe(999);
    expect(backoffDelay(10_000, policy, top)).toBe(999);
  });

  it('is fully jittered: anywhere from zero up to the ceiling', () => {
    expect(backoffDelay(4, policy, () => 0)).toBe(0);
    expect(backoffDelay(4, policy, () => 0.5)).toBe(500);
  });
});

describe('LineSplitter', () => {
  it('yields complete lines only, holding a partial one for the next chunk', () => {
    const s = new LineSplitter();
    expect(s.push('{"a":1}\n{"b"')).toEqual(['{"a":1}']);
    expect(s.push(':2}\n')).toEqual(['{"b":2}']);
  });

  it('drops CR before LF and skips blank lines', () => {
    const s = new LineSplitter();
    expect(s.push('x\r\n\n  \ny\n')).toEqual(['x', 'y']);
  });

  it('hands on an unterminated line once it is longer than the limit, not before', () => {
    const s = new LineSplitter(10);
    expect(s.push('a'.repeat(10))).toEqual([]);
    expect(s.push('b')).toEqual([`${'a'.repeat(10)}b`]);
    // Nothing of it is held back afterwards.
    expect(s.push('c\n')).toEqual(['c']);
  });
});

describe('FleetStore.unreachable', () => {
  const hello = { transport: 'ssh' as const, epoch: EPOCH_A, collectorVersion: '1', actionsAllowed: [] };

  it('records the reason on a host no session publishes for', () => {
    const store = new FleetStore({ clock: () => 1000 });
    store.declare('b1', 'ssh');
    const v = store.version;
    store.unreachable('b1', 'host key refused: x');
    expect(store.version).toBe(v + 1);
    expect(store.hostStatuses()[0]).toMatchObject({ host: 'b1', reachable: false, stale: true, reason: 'host key refused: x' });
    // The same word again is no change for subscribers.
    store.unreachable('b1', 'host key refused: x');
    expect(store.version).toBe(v + 1);
    store.unreachable('b1', 'cannot connect');
    expect(store.hostStatuses()[0]!.reason).toBe('cannot connect');
  });

  it('never overrides a live session, and keeps rows after one ended', () => {
    const store = new FleetStore({ clock: () => 1000 });
    const owner = {};
    store.hello('b1', hello, owner);
    store.applySnapshot('b1', owner, { epoch: EPOCH_A, seq: 1, complete: true, servers: [{ server: SERVER, incarnation: 'i', rows: [protoRow()] }] });
    store.unreachable('b1', 'stray failure');
    expect(store.hostStatuses()[0]).toMatchObject({ reachable: true, reason: null });
    store.linkDown('b1', owner, 'collector command ended');
    store.unreachable('b1', 'cannot connect');
    expect(store.hostStatuses()[0]).toMatchObject({ reachable: false, reason: 'cannot connect' });
    expect(store.rows()).toHaveLength(1);
    expect(store.rows()[0]!.stale).toBe(true);
  });

  it('does not invent hosts', () => {
    const store = new FleetStore({ clock: () => 1000 });
    store.unreachable('nobody', 'x');
    expect(store.hostStatuses()).toEqual([]);
  });
});
