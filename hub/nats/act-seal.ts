// Proof on a request one hub sends another on `tma.act.<hub>`: a MAC, with the fleet's act key,
// over the request, who sent it, whom it is for, when, and a nonce. The owner answers only a
// request that verifies, is for it, is recent, and whose nonce it has not seen: a hand-made
// request from someone who can merely reach NATS, or one replayed from the wire, is refused.
// The hub that sealed it checked the client's token and role first (http/act.ts).

import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** How far a request's time may be from the owner's clock: hubs' clocks differ a little. */
export const ASK_WINDOW_MS = 30_000;

export interface AskSeal {
  from: string;
  to: string;
  at_ms: number;
  nonce: string;
  mac: string;
}

export interface SealedAsk {
  host: string;
  frame: unknown;
  timeout_ms: number;
  seal?: AskSeal;
}

const macOf = (key: Buffer, a: SealedAsk, s: Omit<AskSeal, 'mac'>): string =>
  createHmac('sha256', key)
    .update(JSON.stringify([s.to, s.from, s.at_ms, s.nonce, a.host, a.frame, a.timeout_ms]))
    .digest('base64url');

export function sealAsk<T extends SealedAsk>(key: Buffer, ask: T, from: string, to: string, now: number): T {
  const s = { from, to, at_ms: now, nonce: randomBytes(16).toString('base64url') };
  return { ...ask, seal: { ...s, mac: macOf(key, ask, s) } };
}

/** The owner's check of requests sent to it: one instance per subject served. */
export class AskChecker {
  private readonly seen = new Map<string, number>();

  constructor(
    private readonly key: Buffer,
    private readonly self: string,
    private readonly clock: () => number,
  ) {}

  /** null when the request may be answered, else why it is refused. */
  refusal(a: SealedAsk): string | null {
    const s = a.seal;
    if (!s || typeof s !== 'object') return 'request carries no fleet seal';
    if (typeof s.mac !== 'string' || typeof s.nonce !== 'string' || typeof s.from !== 'string' || typeof s.at_ms !== 'number')
      return 'request seal is malformed';
    const want = Buffer.from(macOf(this.key, a, { from: s.from, to: s.to, at_ms: s.at_ms, nonce: s.nonce }));
    const got = Buffer.from(s.mac);
    if (got.length !== want.length || !timingSafeEqual(got, want)) return 'request seal does not verify with the fleet key';
    if (s.to !== this.self) return `request sealed for hub ${s.to}, not this one`;
    const now = this.clock();
    if (Math.abs(now - s.at_ms) > ASK_WINDOW_MS)
      return `request sealed ${Math.round((now - s.at_ms) / 1000)} s from this hub's clock (window ${ASK_WINDOW_MS / 1000} s)`;
    if (this.seen.has(s.nonce)) return 'request nonce already seen (a replay)';
    this.seen.set(s.nonce, s.at_ms + ASK_WINDOW_MS);
    if (this.seen.size > 1024) for (const [n, until] of this.seen) if (until < now) this.seen.delete(n);
    return null;
  }
}
