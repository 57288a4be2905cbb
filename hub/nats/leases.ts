// One owner per host, at a cost per hub rather than per host. Each hub keeps one liveness key
// (`l.<hub>`) in the hosts bucket, put again well inside its lease; a host's claim (`o.<host>`)
// names its hub and is written once, when taken, with a compare-and-set. A claim stands while the
// hub it names is live: so a hub renews one key a second whatever it holds, and its claims run
// out together when it dies (within one lease: the failover bound is unchanged).
//
// Nothing here hands a host off on a write whose outcome is unknown. The liveness key is a plain
// put only its hub makes, so a put that timed out at the client but landed cannot conflict with
// the next; a claim that fails or times out is read back and kept when it names this hub. A hub
// learns that another took one of its hosts from the bucket's watch (a newer claim naming another
// hub), never from its own failed request.

import type { KV } from '@nats-io/kv';
import type { Logger } from 'pino';
import { livenessKey, ownerKey } from './keys.js';
import { parseLivenessWire, parseOwnerWire, type LivenessWire, type OwnerWire } from './wire.js';
import { UNSEALED, type ValueSeal } from './claim-seal.js';

const ownerOrNull = (v: unknown): OwnerWire | null => {
  try {
    return parseOwnerWire(JSON.stringify(v));
  } catch {
    return null;
  }
};

const isConflict = (e: unknown): boolean => /wrong last sequence|key exists/i.test((e as Error).message ?? '');

const MAX_BEATS_IN_FLIGHT = 3;

export const REASON_TAKEN = 'another hub took over this host';

export class Leases {
  /** Hosts this hub holds, with the revision of the claim naming it. */
  private readonly held = new Map<string, number>();
  /** Each hub's liveness as last read from the bucket: until when its claims stand. */
  private readonly lives = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;
  /** Liveness puts sent and not yet answered. */
  private beating = 0;
  /** When this hub's own liveness, as last written and acknowledged, runs out. */
  private liveUntil = 0;
  /** Releases under way (a closing hub waits for them). */
  releasing = 0;
  /** KV writes made, for the bench and the tests: liveness puts and claim writes. */
  readonly writes = { liveness: 0, claims: 0 };

  constructor(
    private readonly kv: KV,
    private readonly hubId: string,
    private readonly leaseMs: number,
    private readonly clock: () => number,
    private readonly logger: Logger,
    /** The claim is gone (taken by another hub): the host's link must end. */
    private readonly onLost: (host: string, reason: string) => void,
    /** Claims and liveness as written and read: MAC'd with the fleet key (claim-seal.ts). */
    private readonly sealer: ValueSeal = UNSEALED,
  ) {}

  /** A claim's text as read, or null when it does not verify or is not a claim. */
  readClaim(kvKey: string, text: string): OwnerWire | null {
    const v = this.sealer.open(kvKey, text);
    return v === null ? null : (ownerOrNull(v) ?? null);
  }

  /** A liveness key's text as read, or null when it does not verify or is not one. */
  readLiveness(kvKey: string, text: string): LivenessWire | null {
    const v = this.sealer.open(kvKey, text);
    if (v === null) return null;
    try {
      return parseLivenessWire(JSON.stringify(v));
    } catch {
      return null;
    }
  }

  /** Write this hub's liveness once (awaited: no claim before it stands), then keep it up. */
  async start(): Promise<void> {
    await this.beat(true);
    this.timer = setInterval(() => void this.beat(false), Math.max(100, Math.floor(this.leaseMs / 3)));
    this.timer.unref();
  }

  private async beat(mustLand: boolean): Promise<void> {
    // A put a tick, even while earlier ones wait for their replies: a reply slower than the lease
    // must not let the key lapse at the server, where the put itself landed long ago. Puts are
    // plain (no compare-and-set) and go in order on one connection, so overlapping is harmless;
    // a few in flight at most, so a NATS that answers nothing gets no queue.
    if (this.beating >= MAX_BEATS_IN_FLIGHT) return;
    this.beating++;
    const until = this.clock() + this.leaseMs;
    const w: LivenessWire = { hub: this.hubId, until_ms: until };
    try {
      this.writes.liveness++;
      await this.kv.put(livenessKey(this.hubId), this.sealer.seal(livenessKey(this.hubId), w));
      this.liveUntil = Math.max(this.liveUntil, until);
    } catch (e) {
      if (mustLand) throw e;
      // Outcome unknown (it may have landed): nothing is handed off on it; the next tick puts again.
      this.logger.warn({ err: (e as Error).message }, 'liveness put failed; retrying');
    } finally {
      this.beating--;
    }
  }

  holds(host: string): boolean {
    return this.held.has(host);
  }

  /** Whether a claim read from the bucket still stands (its hub is live, or, written by an older
   * hub without `hub_lease`, its own time is not past). */
  stands(o: OwnerWire): boolean {
    const now = this.clock();
    if (!o.hub_lease) return o.until_ms > now;
    const until = o.hub === this.hubId ? Math.max(this.liveUntil, this.lives.get(o.hub) ?? 0) : (this.lives.get(o.hub) ?? 0);
    return until > now;
  }

  /** A liveness key changed (from the watch); `w` is null when it was deleted. */
  noteLiveness(hub: string, w: LivenessWire | null): void {
    if (w) this.lives.set(hub, w.until_ms);
    else this.lives.delete(hub);
  }

  /** A claim changed (from the watch). A newer claim naming another hub ends this hub's hold;
   * a claim of ours deleted while the link is still here is written again. */
  noteClaim(host: string, w: OwnerWire | null, revision: number): void {
    const mine = this.held.get(host);
    if (mine === undefined || revision <= mine) return;
    if (w?.hub === this.hubId) {
      this.held.set(host, revision);
      return;
    }
    this.held.delete(host);
    if (w) {
      this.lose(host, REASON_TAKEN);
      return;
    }
    void this.claim(host).then(
      (ok) => {
        if (!ok) this.lose(host, REASON_TAKEN);
      },
      (e: unknown) => this.lose(host, `could not claim ${host} again in NATS: ${(e as Error).message}`),
    );
  }

  private text(key: string): string {
    const w: OwnerWire = { hub: this.hubId, until_ms: this.clock() + this.leaseMs, hub_lease: true };
    return this.sealer.seal(key, w);
  }

  /** Claim `host`: true when this hub holds it now; false when a standing claim of another hub does. */
  async claim(host: string): Promise<boolean> {
    const key = ownerKey(host);
    const cur = await this.kv.get(key);
    // One that does not verify stands for nothing: it is overwritten like a lapsed one.
    const w = cur && cur.operation === 'PUT' ? this.readClaim(key, cur.string()) : null;
    if (cur && w?.hub === this.hubId) {
      // Ours already (a write whose reply was lost, or the link came back): nothing to write.
      this.held.set(host, cur.revision);
      return true;
    }
    if (w && this.stands(w)) return false;
    try {
      this.writes.claims++;
      const revision = cur ? await this.kv.update(key, this.text(key), cur.revision) : await this.kv.create(key, this.text(key));
      this.held.set(host, Math.max(revision, this.held.get(host) ?? 0));
      return true;
    } catch (e) {
      // A conflict, or a timeout: either may hide our own write, landed. Read it back.
      const back = await this.kv.get(key).catch(() => undefined);
      if (back === undefined) throw e;
      const bw = back && back.operation === 'PUT' ? this.readClaim(key, back.string()) : null;
      if (back && bw?.hub === this.hubId) {
        this.held.set(host, back.revision);
        return true;
      }
      if (bw || isConflict(e)) return false;
      throw e;
    }
  }

  private lose(host: string, reason: string): void {
    this.logger.warn({ host, reason }, 'lost the claim on a host');
    this.onLost(host, reason);
  }

  /** Give the host up (its link ended): another hub may take it at once. */
  async release(host: string): Promise<void> {
    const revision = this.held.get(host);
    if (revision === undefined) return;
    this.held.delete(host);
    this.releasing++;
    await this.kv.delete(ownerKey(host), { previousSeq: revision }).catch(() => undefined);
    this.releasing--;
  }

  /** Stop beating; a clean close also deletes the liveness key so its claims lapse at once. */
  async close(clean = false): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    if (clean) await this.kv.delete(livenessKey(this.hubId)).catch(() => undefined);
  }
}
