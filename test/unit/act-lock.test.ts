import { describe, expect, test } from 'vitest';
import {
  formatLockValue,
  holdsLock,
  leadingExpiry,
  LOCK_SLACK_MS,
  lockExpiry,
  lockHeld,
  nonceFromBytes,
  parseLockValue,
} from '../../collector/act/lock-value.js';

const N = '0123456789abcdef0123456789abcdef';
const dead = () => false;
const alive = () => true;

describe('lock value', () => {
  test('round-trips through format and parse', () => {
    const v = { expiryMs: 1_790_000_035_000, nonce: N, pid: 4242, name: 'approve' };
    expect(formatLockValue(v)).toBe(`1790000035000:${N}:4242:approve`);
    expect(parseLockValue(formatLockValue(v))).toEqual(v);
  });

  test('anything malformed parses as no lock', () => {
    for (const bad of ['', 'junk', `1:${N.slice(1)}:1:a`, `1:${N}x:1:a`, `1:${N.toUpperCase()}:1:a`, `x1:${N}:1:a`, `1:${N}:1:`, `1:${N}:p:a`]) {
      expect(parseLockValue(bad)).toBeNull();
    }
  });

  test('the nonce is 128 bits of hex', () => {
    expect(nonceFromBytes(new Uint8Array(16).fill(255))).toBe('f'.repeat(32));
    expect(nonceFromBytes(Uint8Array.from({ length: 16 }, (_, i) => i))).toBe('000102030405060708090a0b0c0d0e0f');
    expect(() => nonceFromBytes(new Uint8Array(15))).toThrow();
    expect(() => nonceFromBytes(new Uint8Array(17))).toThrow();
  });

  test('leading digits are what the server-side acquire compares', () => {
    expect(leadingExpiry(`5000:${N}:1:a`)).toBe(5000);
    expect(leadingExpiry('junk')).toBe(0);
    expect(leadingExpiry('')).toBe(0);
  });

  test('expiry is now + bound + slack', () => {
    expect(lockExpiry(1000, 30_000)).toBe(1000 + 30_000 + LOCK_SLACK_MS);
    expect(LOCK_SLACK_MS).toBe(5000);
  });
});

describe('lockHeld', () => {
  const v = `5000:${N}:77:approve`;
  test('empty is free', () => {
    expect(lockHeld('', 1, alive)).toBe(false);
  });
  test('held until its expiry inclusive, free just after (holder gone)', () => {
    expect(lockHeld(v, 4999, dead)).toBe(true);
    expect(lockHeld(v, 5000, dead)).toBe(true);
    expect(lockHeld(v, 5001, dead)).toBe(false);
  });
  test('an expired holder whose pid still runs keeps the lock', () => {
    const seen: number[] = [];
    expect(lockHeld(v, 5001, (pid) => (seen.push(pid), true))).toBe(true);
    expect(seen).toEqual([77]);
  });
  test('an unparseable value is judged by its leading digits alone', () => {
    expect(lockHeld('9000:garbage', 8999, alive)).toBe(true);
    expect(lockHeld('9000:garbage', 9001, alive)).toBe(false);
    expect(lockHeld('junk', 1, alive)).toBe(false);
  });
});

describe('holdsLock (read-back)', () => {
  test('only our nonce wins', () => {
    expect(holdsLock(`5000:${N}:1:approve`, N)).toBe(true);
    expect(holdsLock(`5000:${'f'.repeat(32)}:1:approve`, N)).toBe(false);
    expect(holdsLock('', N)).toBe(false);
  });
});
