// One owner per host: the hub holding a host's link claims it in the hosts bucket (`o.<host>`)
// with a compare-and-set and renews the claim well inside its lease. Revisions make the claim
// safe whatever the clocks say: a renewal only lands on the revision this hub wrote last, so a
// hub that lost its claim finds out on its next renewal. The expiry time is for the others: a
// claim not renewed by then belongs to a hub that died, and the next link on any hub takes it.

import type { KV } from '@nats-io/kv';
import type { Logger } from 'pino';
import { ownerKey } from './keys.js';
import type { OwnerWire } from './wire.js';

const isConflict = (e: unknown): boolean => /wrong last sequence|key exists/i.test((e as Error).message ?? '');

export class Leases {
  /** Hosts this hub holds, with the revision of its last write of the claim and when it runs out. */
  private readonly held = new Map<string, { revision: number; until: number; warned?: boolean }>();
  /** Hosts with a renewal in flight: a second one on the same revision would conflict with the first. */
  private readonly renewing = new Set<string>();
  private readonly timer: NodeJS.Timeout;
  /** Releases under way (a closing hub waits for them). */
  releasing = 0;

  constructor(
    private readonly kv: KV,
    private readonly hubId: string,
    private readonly leaseMs: number,
    private readonly clock: () => number,
    private readonly logger: Logger,
    /** The claim is gone (taken, or run out while NATS was away): the host's link must end. */
    private readonly onLost: (host: string, reason: string) => void,
  ) {
    this.timer = setInterval(() => void this.renewAll(), Math.max(100, Math.floor(leaseMs / 3)));
    this.timer.unref();
  }

  holds(host: string): boolean {
    return this.held.has(host);
  }

  private value(): { text: string; until: number } {
    const until = this.clock() + this.leaseMs;
    const w: OwnerWire = { hub: this.hubId, until_ms: until };
    return { text: JSON.stringify(w), until };
  }

  /** Claim `host`: true when this hub holds it now; false when a live claim of another hub stands. */
  async claim(host: string): Promise<boolean> {
    const key = ownerKey(host);
    const { text, until } = this.value();
    const cur = await this.kv.get(key);
    let revision: number;
    try {
      if (!cur || cur.operation !== 'PUT') revision = await this.kv.create(key, text);
      else {
        const w = cur.json<OwnerWire>();
        if (w.hub !== this.hubId && w.until_ms > this.clock()) return false;
        revision = await this.kv.update(key, text, cur.revision);
      }
    } catch (e) {
      if (isConflict(e)) return false;
      throw e;
    }
    this.held.set(host, { revision, until });
    return true;
  }

  private async renewAll(): Promise<void> {
    await Promise.all([...this.held.keys()].map((h) => this.renew(h)));
  }

  private async renew(host: string): Promise<void> {
    const mine = this.held.get(host);
    if (!mine || this.renewing.has(host)) return;
    this.renewing.add(host);
    try {
      await this.renewOnce(host, mine);
    } finally {
      this.renewing.delete(host);
    }
  }

  private async renewOnce(host: string, mine: { revision: number; until: number; warned?: boolean }): Promise<void> {
    const { text, until } = this.value();
    try {
      const revision = await this.kv.update(ownerKey(host), text, mine.revision);
      if (this.held.get(host) === mine) this.held.set(host, { revision, until });
    } catch (e) {
      if (this.held.get(host) !== mine) return;
      if (isConflict(e)) {
        // A conflict may be our own earlier write that timed out at the client but landed at the
        // server: read the claim back and keep it when it still names this hub.
        const cur = await this.kv.get(ownerKey(host)).catch(() => undefined);
        if (this.held.get(host) !== mine) return;
        if (cur === undefined) {
          mine.warned = true;
          return; // outcome unknown: never hand a host off on it; the next tick retries
        }
        const w = cur && cur.operation === 'PUT' ? cur.json<OwnerWire>() : undefined;
        if (w?.hub === this.hubId) {
          this.held.set(host, { revision: cur!.revision, until: w.until_ms });
          return;
        }
        this.lose(host, 'another hub took over this host');
        return;
      }
      // NATS (or JetStream, electing a leader) is away. The link stays: the collector is on this
      // hub, so no other hub can have claimed the host meanwhile except through a link of its
      // own, and then the next renewal that lands finds the conflict. The others show the host
      // stale once the claim's time is past, as they should: they hear nothing from it.
      if (!mine.warned) this.logger.warn({ host, err: (e as Error).message }, 'lease renewal failed; retrying');
      mine.warned = true;
    }
  }

  private lose(host: string, reason: string): void {
    this.held.delete(host);
    this.logger.warn({ host, reason }, 'lost the claim on a host');
    this.onLost(host, reason);
  }

  /** Give the host up (its link ended): another hub may take it at once. */
  async release(host: string): Promise<void> {
    const mine = this.held.get(host);
    if (!mine) return;
    this.held.delete(host);
    this.releasing++;
    await this.kv.delete(ownerKey(host), { previousSeq: mine.revision }).catch(() => undefined);
    this.releasing--;
  }

  close(): void {
    clearInterval(this.timer);
  }
}
