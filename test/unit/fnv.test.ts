import { describe, expect, it } from 'vitest';
import { fnv1a64 } from '../../collector/core/fnv.js';

// Straight-line bigint FNV-1a, the textbook definition, to check the split-word fast path against.
function textbook(bytes: Uint8Array): bigint {
  let h = 0xcbf29ce484222325n;
  for (const b of bytes) h = ((h ^ BigInt(b)) * 0x100000001b3n) & 0xffffffffffffffffn;
  return h;
}

describe('fnv1a64', () => {
  it('matches the published 64-bit FNV-1a vectors', () => {
    expect(fnv1a64('').toString(16)).toBe('cbf29ce484222325');
    expect(fnv1a64('a').toString(16)).toBe('af63dc4c8601ec8c');
    expect(fnv1a64('foobar').toString(16)).toBe('85944171f73967e8');
  });

  it('hashes strings as their UTF-8 bytes', () => {
    expect(fnv1a64('é✳')).toBe(fnv1a64(new Uint8Array([0xc3, 0xa9, 0xe2, 0x9c, 0xb3])));
    expect(fnv1a64('é')).not.toBe(fnv1a64(new Uint8Array([0xe9])));
  });

  it('agrees with the textbook bigint loop on varied input, including every byte value', () => {
    const all = new Uint8Array(256).map((_, i) => i);
    expect(fnv1a64(all)).toBe(textbook(all));
    const screen = '\u001b[1m❯\u001b[0m esc to interrupt\n'.repeat(300);
    expect(fnv1a64(screen)).toBe(textbook(new TextEncoder().encode(screen)));
    let seed = 7;
    const noisy = new Uint8Array(4096).map(() => (seed = (seed * 1103515245 + 12345) % 2147483648) & 0xff);
    expect(fnv1a64(noisy)).toBe(textbook(noisy));
  });

  it('returns a value that fits an unsigned 64-bit option', () => {
    const h = fnv1a64('x'.repeat(1000));
    expect(h >= 0n && h <= 0xffffffffffffffffn).toBe(true);
  });
});
