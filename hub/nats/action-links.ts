// Action links on NATS: every hub signs with one key and records uses in one book, so a link one
// hub minted works on any hub, once. The key is derived from the fleet secret each hub is given
// (fleet-keys.ts), never kept in a bucket. A use is a create() of the nonce's key: of two hubs
// claiming one nonce, the second is refused by the server, whatever either knew. A watch of the
// book lets a hub refuse a known use at once, before it asks.

import type { KV } from '@nats-io/kv';
import type { Logger } from 'pino';
import { NonceTakenError, type NonceStore } from '../notify/nonce-book.js';
import { follow, type Following } from './follow.js';
import { nonceKey } from './keys.js';

const lostRace = (e: unknown) => /wrong last sequence|key exists/i.test((e as Error).message);

export class KvNonceBook implements NonceStore {
  /** Nonces known used: this hub's claims at once, every hub's through the watch. */
  private readonly seen = new Map<string, number>();
  private readonly writes = new Map<string, Promise<void>>();
  private following: Following | null = null;

  constructor(
    private readonly kv: KV,
    private readonly clock: () => number,
  ) {}

  async start(logger: Logger): Promise<void> {
    this.following = await follow(
      this.kv,
      {
        onEntry: (key, value) => {
          if (value === null || !key.startsWith('n.')) return;
          const v = JSON.parse(new TextDecoder().decode(value)) as { nonce: string; expires_ms: number };
          this.seen.set(v.nonce, v.expires_ms);
        },
      },
      logger,
      'action nonces',
    );
    await this.following.ready;
  }

  claim(nonce: string, expiresMs: number): boolean {
    if (this.seen.has(nonce)) return false;
    this.seen.set(nonce, expiresMs);
    this.prune();
    const w = this.kv.create(nonceKey(nonce), JSON.stringify({ nonce, expires_ms: expiresMs, at_ms: this.clock() })).then(
      () => undefined,
      (e: unknown) => {
        if (lostRace(e)) throw new NonceTakenError('claimed on another hub');
        // Not recorded, so not used: the link may be tried again once NATS answers.
        this.seen.delete(nonce);
        throw e;
      },
    );
    w.catch(() => undefined);
    this.writes.set(nonce, w);
    w.finally(() => this.writes.delete(nonce)).catch(() => undefined);
    return true;
  }

  persisted(nonce: string): Promise<void> {
    return this.writes.get(nonce) ?? Promise.resolve();
  }

  used(nonce: string): boolean {
    return this.seen.has(nonce);
  }

  stop(): void {
    this.following?.stop();
  }

  private prune(): void {
    if (this.seen.size < 4096) return;
    const now = this.clock();
    for (const [n, x] of this.seen) if (x <= now) this.seen.delete(n);
  }
}
