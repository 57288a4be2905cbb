// A hub's part in a fleet on NATS: its connection and buckets, the store that follows them, the
// subject it answers requests for its hosts on, and the shared slots. Started before the hub listens: a hub that
// cannot reach NATS or list the fleet does not serve a partial one.

import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { NatsConfig } from '../config/config.js';
import type { HostTarget } from '../link/host-target.js';
import { connectFleet, type FleetBuckets } from './connect.js';
import { remoteTarget, serveHostRequests } from './host-route.js';
import { NatsFleetStore } from '../store/nats-store.js';
import { KvSlotBook } from './slots.js';

export interface NatsFleet {
  hubId: string;
  buckets: FleetBuckets;
  store: NatsFleetStore;
  slots: KvSlotBook;
  /** Answer requests (act, mute, preview) for the hosts whose links this hub holds. */
  serveHostRequests(local: (host: string) => HostTarget | undefined): void;
  /** Where a request for `host` goes when its link is not on this hub: the holder, or nowhere. */
  remote(host: string): HostTarget | undefined;
  health(): { ok: boolean; nats: Record<string, unknown> };
  close(): Promise<void>;
}

export async function startNatsFleet(cfg: NatsConfig, o: { clock: () => number; lostAfterMs: number; logger: Logger }): Promise<NatsFleet> {
  const hubId = `${hostname()
    .replace(/[^A-Za-z0-9_-]/g, '_')
    .slice(0, 40)}-${randomBytes(4).toString('hex')}`;
  const buckets = await connectFleet(cfg, `tma-hub ${hubId}`);
  const store = new NatsFleetStore({ buckets, hubId, leaseMs: cfg.leaseMs, logger: o.logger, clock: o.clock, lostAfterMs: o.lostAfterMs });
  try {
    await store.start();
  } catch (e) {
    await store.close();
    await buckets.nc.close();
    throw e;
  }
  o.logger.info({ hub_id: hubId, servers: cfg.servers, replicas: cfg.replicas, lease_ms: cfg.leaseMs }, 'fleet on NATS: listed, following');
  let sub: { unsubscribe(): void } | null = null;
  return {
    hubId,
    buckets,
    store,
    slots: new KvSlotBook(buckets.slots, hubId, o.clock),
    serveHostRequests(local) {
      sub = serveHostRequests(buckets.nc, hubId, local, o.logger);
    },
    remote(host) {
      const owner = store.ownerOf(host);
      return owner && owner !== hubId ? remoteTarget(buckets.nc, owner, host) : undefined;
    },
    health: () => ({ ok: store.connected, nats: { hub_id: hubId, ...store.natsHealth() } }),
    async close() {
      // This hub's own hosts' last state and released claims go out before the connection ends.
      await store.settle(2000);
      sub?.unsubscribe();
      await store.close();
      await buckets.nc.drain().catch(() => buckets.nc.close());
    },
  };
}
