// 64-bit FNV-1a. The poll cycle stores it as @agent_hash so a later cycle can tell whether the
// captured screen changed; the value must match the reference tool's bit for bit.
//
// The loop runs on two 32-bit halves instead of bigint: a capture is tens of kilobytes and a
// bigint multiply per byte is needlessly slow. The prime is 2^40 + 0x1b3, so the product splits
// into `h * 0x1b3` plus `lo << 40` (which lands in the high half as `lo << 8`).

const utf8 = new TextEncoder();
const TWO_32 = 0x1_0000_0000;

export function fnv1a64(input: Uint8Array | string): bigint {
  const bytes = typeof input === 'string' ? utf8.encode(input) : input;
  let hi = 0xcbf29ce4;
  let lo = 0x84222325;
  for (const b of bytes) {
    lo = (lo ^ b) >>> 0;
    const low = lo * 0x1b3;
    const carry = Math.floor(low / TWO_32);
    hi = (hi * 0x1b3 + lo * 256 + carry) >>> 0;
    lo = low >>> 0;
  }
  return (BigInt(hi) << 32n) | BigInt(lo);
}
