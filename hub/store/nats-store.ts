// The fleet store on NATS JetStream: the same `FleetStore` as the in-memory one, and the same
// reads (it is one, underneath), with the fleet shared by every hub on the same NATS.
//
// A host whose link this hub holds is written here, by its sessions, exactly as on one hub, and
// copied out to the buckets (writer.ts) while this hub holds its claim (leases.ts). Every other
// host is followed: its owner's writes arrive by watch (follow.ts) and are kept as a shadow of the
// buckets, from which the host's record is rebuilt. Whether a followed host is fresh is decided
// from its owner's lease, the same on every hub: a lease run out, or NATS lost here, shows the
// host as unreachable with the reason, never as fresh.

import type { Logger } from 'pino';
import type { Transport } from '../../shared/fleet.js';
import type { DeltaFrameIn, HelloInfo, ServerFrameIn, SnapshotFrameIn, ApplyOutcome } from './fleet-store.js';
import { MemoryFleetStore, type FleetStoreOptions } from './memory-store.js';
import type { ServerSlot } from './host-record.js';
import { rowEntry, sameEntry, type RowEntry } from './pieces.js';
import type { FleetBuckets } from '../nats/connect.js';
import { follow, type Following } from '../nats/follow.js';
import { ownerKey, parseHostKey, parseRowKey, rowKey, statusKey } from '../nats/keys.js';
import { Leases } from '../nats/leases.js';
import { OwnedWriter } from '../nats/writer.js';
import { AckedPublisher } from '../nats/acked-publish.js';
import { applyHostWire, type HostWire, type OwnerWire } from '../nats/wire.js';
import { checkRow, sealRow } from '../nats/row-check.js';
import { checkStatus, sealStatus } from '../nats/status-check.js';
import { fleetSeal } from '../nats/claim-seal.js';

export const REASON_LEASE_LAPSED = 'its hub stopped renewing its claim on the host';
export const REASON_NATS_LOST = 'this hub lost NATS; showing what it last knew';

export interface NatsStoreOptions extends FleetStoreOptions {
  buckets: FleetBuckets;
  hubId: string;
  /** The fleet's row key (fleet-keys.ts): rows are sealed with it and checked against it. */
  rowKey: Buffer;
  leaseMs: number;
  logger: Logger;
}

interface ShadowRow {
  server: string;
  pane: string;
  incarnation: string;
  entry: RowEntry;
}

const dec = new TextDecoder();

export class NatsFleetStore extends MemoryFleetStore {
  readonly hubId: string;
  private readonly b: FleetBuckets;
  private readonly log: Logger;
  private readonly leases: Leases;
  private readonly writer: OwnedWriter;
  private readonly publisher: AckedPublisher;
  /** Hosts a session of this hub publishes for (hello said, link not down). */
  private readonly local = new Set<string>();
  private readonly statuses = new Map<string, HostWire>();
  private readonly owners = new Map<string, OwnerWire>();
  private readonly shadowRows = new Map<string, Map<string, ShadowRow>>();
  private readonly declared = new Map<string, Transport>();
  /** Hosts whose record was rebuilt from the buckets (and go when their status is deleted). */
  private readonly followed = new Set<string>();
  /** The override each followed host was last rebuilt with, to notice a lease running out. */
  private readonly shownOverride = new Map<string, string | null>();
  private readonly toRebuild = new Set<string>();
  private rebuildScheduled = false;
  private followings: Following[] = [];
  private natsUp = true;
  private leaseTimer: NodeJS.Timeout | null = null;
  /** Rows read from NATS and refused by row-check.ts (forged, malformed, or bound to another key). */
  private rowsRefused = 0;
  /** Host statuses read from NATS and refused by status-check.ts. */
  private statusesRefused = 0;
  /** Claims and hub liveness read from NATS and refused by claim-seal.ts. */
  private claimsRefused = 0;
  private readonly rowKey: Buffer;
  /** Called when this hub's claim on a host is gone: the server ends that host's link. */
  onClaimLost: (host: string, reason: string) => void = () => undefined;

  constructor(o: NatsStoreOptions) {
    super(o);
    this.b = o.buckets;
    this.hubId = o.hubId;
    this.rowKey = o.rowKey;
    this.log = o.logger.child({ nats: o.hubId });
    this.leases = new Leases(o.buckets.hosts, o.hubId, o.leaseMs, this.clock, this.log, (host, reason) => this.onClaimLost(host, reason), fleetSeal(o.rowKey));
    this.publisher = new AckedPublisher(o.buckets.nc);
    this.writer = new OwnedWriter(
      o.buckets.rows,
      o.buckets.hosts,
      o.hubId,
      (host) => this.hosts.get(host),
      (host) => this.leases.holds(host),
      (host) => [...(this.shadowRows.get(host)?.values() ?? [])].map((r) => rowKey(host, r.server, r.pane)),
      this.clock,
      this.log,
      this.publisher,
      (key, incarnation, row) => sealRow(this.rowKey, key, this.hubId, incarnation, row),
      (key, wire) => sealStatus(this.rowKey, key, wire),
    );
  }

  /** List then watch both buckets; resolves once the whole fleet is held (before the hub serves). */
  async start(): Promise<void> {
    await this.leases.start();
    this.followings = [
      await follow(this.b.hosts, { onEntry: (k, v, r) => this.hostEntry(k, v, r) }, this.log, 'hosts'),
      await follow(this.b.rows, { onEntry: (k, v) => this.rowEntryIn(k, v) }, this.log, 'rows'),
    ];
    await Promise.all(this.followings.map((f) => f.ready));
    this.rebuildNow();
    this.leaseTimer = setInterval(() => this.checkLeases(), 250);
    this.leaseTimer.unref();
    void this.watchConnection();
  }

  private async watchConnection(): Promise<void> {
    for await (const s of this.b.nc.status()) {
      if (s.type !== 'disconnect' && s.type !== 'reconnect') continue;
      const up = s.type === 'reconnect';
      if (up === this.natsUp) continue;
      this.natsUp = up;
      this.log[up ? 'info' : 'warn'](
        { server: s.server },
        up ? 'NATS is back; catching up from the last revision' : 'NATS lost; serving what this hub last knew',
      );
      // The old watches may have died with the connection: new ones resume from their revision.
      if (up) for (const f of this.followings) f.restart();
      for (const host of this.statuses.keys()) this.toRebuild.add(host);
      this.scheduleRebuild();
    }
  }

  /** For `/healthz`: whether NATS is reachable, and the last revisions followed. */
  natsHealth(): { connected: boolean; hosts_revision: number; rows_revision: number; rows_refused: number; statuses_refused: number; claims_refused: number } {
    return {
      connected: this.natsUp,
      hosts_revision: this.followings[0]?.revision() ?? 0,
      rows_revision: this.followings[1]?.revision() ?? 0,
      rows_refused: this.rowsRefused,
      statuses_refused: this.statusesRefused,
      claims_refused: this.claimsRefused,
    };
  }

  get connected(): boolean {
    return this.natsUp;
  }

  /** The hub holding `host`'s link now: this one, another, or none (no claim, or it ran out). */
  ownerOf(host: string): string | null {
    if (this.local.has(host) && this.leases.holds(host)) return this.hubId;
    const o = this.owners.get(host);
    if (!this.natsUp || !o || !this.leases.stands(o)) return null;
    return o.hub;
  }

  /** Refuse a link while another hub's claim on the host stands, or while NATS cannot confirm one. */
  admit(host: string): string | null {
    if (!this.natsUp) return `this hub has lost NATS and cannot claim ${host}; try another hub`;
    const o = this.owners.get(host);
    if (o && o.hub !== this.hubId && this.leases.stands(o)) {
      return `another collector already publishes for ${host} over a live link (through another hub); this one is refused until that link ends`;
    }
    return null;
  }

  // ---- following: the buckets' entries into the shadow, and followed hosts rebuilt from it

  private hostEntry(key: string, value: Uint8Array | null, revision: number): void {
    const k = parseHostKey(key);
    if (!k) return;
    if (k.kind === 'l') {
      // A hub's liveness: its followed hosts are rechecked by the lease timer. One that does not
      // verify is ignored: the hub's last verified liveness stands until it runs out.
      const w = value ? this.leases.readLiveness(key, dec.decode(value)) : null;
      if (value && !w) return this.refusedClaim(key, k.host);
      this.leases.noteLiveness(k.host, w);
      return;
    }
    if (k.kind === 'o') {
      // One that does not verify reads as no claim: the owner, if live, writes its own again.
      const w = value ? this.leases.readClaim(key, dec.decode(value)) : null;
      if (value && !w) this.refusedClaim(key, k.host);
      if (w) this.owners.set(k.host, w);
      else this.owners.delete(k.host);
      this.leases.noteClaim(k.host, w, revision);
    } else if (value) {
      const c = checkStatus(this.rowKey, key, value);
      if (!c.ok) {
        // Refused: the host keeps the last status that verified (or stays unknown).
        this.statusesRefused++;
        this.log.warn({ key, host: k.host, reason: c.reason }, 'host status from NATS refused');
        return;
      }
      this.statuses.set(k.host, c.wire);
    } else this.statuses.delete(k.host);
    this.toRebuild.add(k.host);
    this.scheduleRebuild();
  }

  private refusedClaim(key: string, host: string): void {
    this.claimsRefused++;
    this.log.warn({ key, host }, 'claim or liveness from NATS refused: no fleet MAC that verifies');
  }

  private rowEntryIn(key: string, value: Uint8Array | null): void {
    const k = parseRowKey(key);
    if (!k) return;
    let rows = this.shadowRows.get(k.host);
    const id = `${k.server}\0${k.pane}`;
    const c = value ? checkRow(this.rowKey, key, value) : null;
    if (c && !c.ok) {
      // Refused rows are not shown: the pane's row goes, rather than show what its key now holds.
      this.rowsRefused++;
      this.log.warn({ key, host: k.host, reason: c.reason }, 'row from NATS refused');
    }
    if (c?.ok) {
      if (!rows) {
        rows = new Map<string, ShadowRow>();
        this.shadowRows.set(k.host, rows);
      }
      rows.set(id, { server: k.server, pane: k.pane, incarnation: c.incarnation, entry: rowEntry(c.row) });
    } else if (rows) {
      rows.delete(id);
      if (rows.size === 0) this.shadowRows.delete(k.host);
    }
    this.toRebuild.add(k.host);
    this.scheduleRebuild();
  }

  private scheduleRebuild(): void {
    if (this.rebuildScheduled) return;
    this.rebuildScheduled = true;
    setImmediate(() => this.rebuildNow());
  }

  /** Rebuild every followed host that changed, then tell readers once. */
  private rebuildNow(): void {
    this.rebuildScheduled = false;
    if (this.toRebuild.size === 0) return;
    let moved = false;
    for (const host of this.toRebuild) moved = this.rebuild(host) || moved;
    this.toRebuild.clear();
    if (moved) this.changed();
  }

  private override(w: HostWire, host: string): string | null {
    if (!this.natsUp) return REASON_NATS_LOST;
    if (!w.reachable) return null;
    const o = this.owners.get(host);
    return !o || !this.leases.stands(o) ? REASON_LEASE_LAPSED : null;
  }

  private rebuild(host: string): boolean {
    if (this.local.has(host)) return false;
    const w = this.statuses.get(host);
    const h0 = this.hosts.get(host);
    if (!w) {
      this.shownOverride.delete(host);
      if (!h0 || !this.followed.delete(host)) return false;
      // Forgotten on another hub: gone here too, back to declared when hub.toml names it.
      h0.reachable = false;
      super.forget(host);
      const t = this.declared.get(host);
      if (t) super.declare(host, t);
      return false;
    }
    const h = this.record(host, w.transport);
    this.followed.add(host);
    this.journal.noteHostRows(h);
    const override = this.override(w, host);
    this.shownOverride.set(host, override);
    applyHostWire(h, w, override);
    const servers = new Map<string, ServerSlot>();
    for (const [server, incarnation] of w.servers) servers.set(server, { incarnation, rows: new Map() });
    for (const r of this.shadowRows.get(host)?.values() ?? []) {
      const slot = servers.get(r.server);
      if (!slot || slot.incarnation !== r.incarnation) continue;
      const was = h.servers.get(r.server)?.rows.get(r.pane);
      if (this.journal.on && (!was || !sameEntry(was, r.entry))) this.journal.noteRow(h, r.server, r.pane);
      slot.rows.set(r.pane, was && sameEntry(was, r.entry) ? was : r.entry);
    }
    h.servers = servers;
    this.hostChanged(h, true);
    return true;
  }

  /** A followed host whose owner's lease ran out (or came back) is rebuilt to say so. */
  private checkLeases(): void {
    for (const [host, w] of this.statuses) {
      if (this.local.has(host)) continue;
      if (this.override(w, host) !== (this.shownOverride.get(host) ?? null)) this.toRebuild.add(host);
    }
    this.scheduleRebuild();
  }

  // ---- intake: this hub's own links, written through to the buckets while the claim holds

  override declare(host: string, transport: Transport): void {
    this.declared.set(host, transport);
    super.declare(host, transport);
  }

  override hello(host: string, info: HelloInfo, owner: object): { resumeFrom: number | null; reconnect: boolean } {
    this.local.add(host);
    const out = super.hello(host, info, owner);
    if (this.leases.holds(host)) this.writer.mark(host);
    else
      void this.leases.claim(host).then(
        (ok) => {
          if (ok) this.writer.mark(host);
          else this.onClaimLost(host, `another hub holds ${host}'s link`);
        },
        (e: unknown) => this.onClaimLost(host, `could not claim ${host} in NATS: ${(e as Error).message}`),
      );
    return out;
  }

  private wrote(host: string): void {
    if (this.local.has(host)) this.writer.mark(host);
  }

  override applySnapshot(host: string, owner: object, f: SnapshotFrameIn): ApplyOutcome {
    const r = super.applySnapshot(host, owner, f);
    if (r.ok && r.applied) this.wrote(host);
    return r;
  }

  override applyDelta(host: string, owner: object, f: DeltaFrameIn): ApplyOutcome {
    const r = super.applyDelta(host, owner, f);
    if (r.ok && r.applied) this.wrote(host);
    return r;
  }

  override applyServer(host: string, owner: object, f: ServerFrameIn): ApplyOutcome {
    const r = super.applyServer(host, owner, f);
    if (r.ok && r.applied) this.wrote(host);
    return r;
  }

  override noteHeartbeat(host: string, owner: object, at: number, sentSeq: number | undefined): void {
    super.noteHeartbeat(host, owner, at, sentSeq);
    this.wrote(host);
  }

  override requireSnapshot(host: string, owner: object): void {
    super.requireSnapshot(host, owner);
    this.wrote(host);
  }

  override noteRefusal(host: string, reason: string): void {
    // Only the owner writes a host's status; a refusal on a hub that does not hold the host would
    // show on that hub alone, so it is only logged there.
    if (this.local.has(host) || !this.statuses.has(host)) super.noteRefusal(host, reason);
    this.wrote(host);
  }

  override linkDown(host: string, owner: object, reason: string): void {
    const h = this.hosts.get(host);
    if (!h || h.owner !== owner) return;
    super.linkDown(host, owner, reason);
    this.local.delete(host);
    if (this.leases.holds(host)) {
      // The link's end is written, then the claim let go so the next link on any hub may take it.
      this.writer.mark(host, () => {
        if (this.local.has(host)) return;
        this.writer.forget(host);
        void this.leases.release(host);
      });
    } else {
      this.writer.forget(host);
      this.toRebuild.add(host);
      this.scheduleRebuild();
    }
  }

  override unreachable(host: string, reason: string): void {
    // A dialled link failing here says nothing about a host another hub holds.
    if (this.statuses.has(host) && !this.local.has(host)) return;
    super.unreachable(host, reason);
  }

  override forget(host: string): boolean {
    if (this.local.has(host) || this.ownerOf(host) !== null) return false;
    if (!super.forget(host)) return false;
    this.writer.forget(host);
    const rows = [...(this.shadowRows.get(host)?.values() ?? [])];
    void (async () => {
      for (const r of rows) await this.b.rows.delete(rowKey(host, r.server, r.pane)).catch(() => undefined);
      await this.b.hosts.delete(statusKey(host)).catch(() => undefined);
      await this.b.hosts.delete(ownerKey(host)).catch(() => undefined);
    })();
    return true;
  }

  /** Wait (at most `ms`) until every change to this hub's own hosts is written and claims let go. */
  async settle(ms: number): Promise<void> {
    const until = Date.now() + ms;
    while ((!this.writer.idle || this.leases.releasing > 0) && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
  }

  async close(): Promise<void> {
    if (this.leaseTimer) clearInterval(this.leaseTimer);
    this.writer.close();
    this.publisher.close();
    for (const f of this.followings) f.stop();
    // Clean close: the liveness key goes, so claims this hub did not release lapse at once.
    await this.leases.close(true);
  }
}
