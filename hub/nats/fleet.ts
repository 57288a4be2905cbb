// A hub's part in a fleet on NATS: its connection and buckets, the store that follows them, the
// subject it answers requests for its hosts on, and the shared slots. Started before the hub listens: a hub that
// cannot reach NATS or list the fleet does not serve a partial one.

import type { Logger } from 'pino';
import type { NatsConfig } from '../config/config.js';
import type { HostTarget } from '../link/host-target.js';
import { connectFleet, readCreds, type FleetBuckets } from './connect.js';
import { hubScope, inboxPrefix, makeHubId } from './hub-identity.js';
import { remoteTarget, serveHostRequests } from './host-route.js';
import { NatsFleetStore } from '../store/nats-store.js';
import { KvSlotBook } from './slots.js';
import { jetstreamManager } from '@nats-io/jetstream';
import type { NotifySinkConfig } from '../notify/sink-config.js';
import { KvNonceBook } from './action-links.js';
import { fleetKeys } from './fleet-keys.js';
import { AskChecker, sealAsk } from './act-seal.js';
import { NatsNotifyBook } from './notify-book.js';
import { ensureNotifyStream, NotifyConsumers } from './notify-consumers.js';

export interface NatsFleet {
  hubId: string;
  buckets: FleetBuckets;
  store: NatsFleetStore;
  slots: KvSlotBook;
  /** Notifications once for the fleet: the shared journal and the sinks' shared consumers. */
  notifyBook: NatsNotifyBook;
  notifyConsumers: NotifyConsumers;
  /** Action links: one key (derived from the fleet secret) and one book of used nonces for every hub. */
  nonces: KvNonceBook;
  actionKey: Buffer;
  /** Answer requests (act, mute, preview) for the hosts whose links this hub holds. */
  serveHostRequests(local: (host: string) => HostTarget | undefined): void;
  /** Where a request for `host` goes when its link is not on this hub: the holder, or nowhere. */
  remote(host: string): HostTarget | undefined;
  health(): { ok: boolean; nats: Record<string, unknown> };
  close(): Promise<void>;
}

export async function startNatsFleet(
  cfg: NatsConfig,
  o: { clock: () => number; lostAfterMs: number; logger: Logger; sinks: NotifySinkConfig[] },
): Promise<NatsFleet> {
  // Before dialling: a hub without the fleet secret says what to configure, whatever NATS holds.
  const keys = fleetKeys(cfg.fleetKey);
  // Under a NATS user, the id and inboxes start with its name: the server's per-user rights.
  const scope = hubScope(cfg, cfg.credsFile ? Buffer.from(readCreds(cfg.credsFile)).toString('utf8') : undefined);
  const hubId = makeHubId(scope);
  const buckets = await connectFleet(cfg, `tma-hub ${hubId}`, inboxPrefix(scope));
  const store = new NatsFleetStore({ buckets, hubId, rowKey: keys.rows, leaseMs: cfg.leaseMs, logger: o.logger, clock: o.clock, lostAfterMs: o.lostAfterMs });
  const jsm = await jetstreamManager(buckets.nc);
  const notifyLog = o.logger.child({ part: 'notify' });
  const notifyBook = new NatsNotifyBook(jsm.jetstream(), buckets.notifyOut, notifyLog);
  notifyBook.sinks = o.sinks;
  const nonces = new KvNonceBook(buckets.nonces, o.clock);
  try {
    await store.start();
    await ensureNotifyStream(jsm, cfg.replicas);
    await notifyBook.start();
    await nonces.start(o.logger);
  } catch (e) {
    notifyBook.close();
    nonces.stop();
    await store.close();
    await buckets.nc.close();
    throw e;
  }
  o.logger.info({ hub_id: hubId, servers: cfg.servers, replicas: cfg.replicas, lease_ms: cfg.leaseMs }, 'fleet on NATS: listed, following');
  let sub: { unsubscribe(): void } | null = null;
  let refused = 0;
  const slots = new KvSlotBook(buckets.slots, hubId, o.clock, keys.rows);
  return {
    hubId,
    buckets,
    store,
    slots,
    notifyBook,
    notifyConsumers: new NotifyConsumers(jsm.jetstream(), jsm, notifyBook, notifyLog),
    nonces,
    actionKey: keys.links,
    serveHostRequests(local) {
      sub = serveHostRequests(buckets.nc, hubId, local, o.logger, new AskChecker(keys.act, hubId, o.clock), () => refused++);
    },
    remote(host) {
      const owner = store.ownerOf(host);
      return owner && owner !== hubId ? remoteTarget(buckets.nc, owner, host, (ask) => sealAsk(keys.act, ask, hubId, owner, o.clock())) : undefined;
    },
    health: () => ({ ok: store.connected, nats: { hub_id: hubId, ...store.natsHealth(), requests_refused: refused, slots_refused: slots.refused } }),
    async close() {
      // This hub's own hosts' last state and released claims go out before the connection ends.
      await store.settle(2000);
      sub?.unsubscribe();
      nonces.stop();
      await store.close();
      await buckets.nc.drain().catch(() => buckets.nc.close());
    },
  };
}
