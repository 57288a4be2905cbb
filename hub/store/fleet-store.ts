// The store as the rest of the hub sees it. Link sessions write through `FleetIntake`, the
// configuration and operators through `FleetHosts`; routes, streams and metrics read through
// `FleetReads` and `FleetJournal`. The in-memory store (memory-store.ts) is one implementation;
// another (a replicated one) can stand behind the same interface without http/ or link/ changing.

import type { FleetDocument, FleetRow, HostStatus, Transport } from '../../shared/fleet.js';
import type { CollectorFrame } from '../../shared/protocol.js';
import type { Selector } from '../../shared/selectors.js';
import type { StateClass } from '../../shared/tokens.js';
import type { RowEntry } from './pieces.js';

/** What the store reads of a collector frame: the frame as decoded, less its `type`. */
type FrameBody<T extends CollectorFrame['type']> = Omit<Extract<CollectorFrame, { type: T }>, 'type'>;
export type SnapshotFrameIn = FrameBody<'snapshot'>;
export type DeltaFrameIn = FrameBody<'delta'>;
export type ServerFrameIn = FrameBody<'server'>;

/** A row as a reader last saw it: what it held and whether its host was stale. */
export interface RowSeen {
  entry: RowEntry;
  stale: boolean;
}

/** One row that changed since the last `takeChanges`: before and now (null when absent). */
export interface RowChange {
  key: string;
  before: RowSeen | null;
  after: RowSeen | null;
}

export interface StoreChanges {
  rows: RowChange[];
  /** Hosts whose status changed (last_seen_ms alone does not count). */
  hosts: string[];
}

export type RefusalCode = 'unknown-host' | 'not-owner' | 'epoch' | 'no-baseline' | 'gap' | 'unknown-incarnation';

export type ApplyOutcome = { ok: true; applied: boolean } | { ok: false; code: RefusalCode; message: string };

export interface StoreChange {
  at_ms: number;
  version: number;
}

export interface HostMetrics {
  host: string;
  reachable: boolean;
  stale: boolean;
  lost: boolean;
  rows: number;
  lagMs: number | null;
  lastSeenMs: number | null;
  seqBehind: number | null;
  /** Rows held by class, every class present (zeros included). */
  classes: Record<StateClass, number>;
  /** `since_ms` of the host's longest-blocked row; null when none is blocked. */
  oldestBlockedMs: number | null;
}

export interface HelloInfo {
  transport: Transport;
  epoch: string;
  collectorVersion: string;
  actionsAllowed: string[];
  /** From the hello, when the collector sent them. */
  actionsByAgent?: HostStatus['actions_by_agent'];
  sharesPrompt?: boolean | null;
  remoteVerbs?: string[];
  at?: number;
}

/**
 * The sync protocol's side: one session (`owner`) writes for a host at a time, and a replaced
 * session's late frames and close are ignored.
 */
export interface FleetIntake {
  /** The session becomes the host's only writer. Returns the sequence to resume after, or null. */
  hello(host: string, info: HelloInfo, owner: object): { resumeFrom: number | null; reconnect: boolean };
  applySnapshot(host: string, owner: object, f: SnapshotFrameIn): ApplyOutcome;
  applyDelta(host: string, owner: object, f: DeltaFrameIn): ApplyOutcome;
  applyServer(host: string, owner: object, f: ServerFrameIn): ApplyOutcome;
  /** Some parts of a split snapshot arrived and its complete part has not. */
  snapshotPending(host: string, owner: object): boolean;
  /** A frame arrived from the host's current session. */
  touch(host: string, owner: object): void;
  noteHeartbeat(host: string, owner: object, at: number, sentSeq: number | undefined): void;
  /** Only a complete snapshot is accepted next; the rows stay, stale, until then. */
  requireSnapshot(host: string, owner: object): void;
  /** The session ended or went silent: rows are kept and marked stale. */
  linkDown(host: string, owner: object, reason: string): void;
  /** A link for a known host was refused; shown on its status until a link is accepted. */
  noteRefusal(host: string, reason: string): void;
}

/** What the hub's configuration and its operators do to hosts, whatever link they have. */
export interface FleetHosts {
  /** Make a configured host visible before it ever connects. */
  declare(host: string, transport: Transport): void;
  /** A dialled link could not be set up or ended; ignored while a session publishes. */
  unreachable(host: string, reason: string): void;
  /** Remove a host and its rows; false while a link is up. */
  forget(host: string): boolean;
  /** Re-evaluate which unreachable hosts are lost. */
  sweep(): void;
}

/** What readers see, and a signal when it changed. */
export interface FleetReads {
  readonly version: number;
  onChange(cb: (c: StoreChange) => void): () => void;
  /** Every row in fleet order. */
  rows(): readonly FleetRow[];
  hostStatuses(): HostStatus[];
  /** A host's status as JSON; null for a host the store no longer holds. */
  hostStatusText(host: string): string | null;
  actionsAllowed(host: string): readonly string[];
  /** Requests besides `act` the host's collector answers (`mute`, `preview`). */
  remoteVerbs(host: string): readonly string[];
  hostMetrics(): HostMetrics[];
  document(selector?: Selector): FleetDocument;
  documentText(selector?: Selector): string;
  documentBytes(selector?: Selector): Buffer;
  /** The document's bytes in parts, sent in order as one text. */
  documentParts(selector?: Selector): Buffer[];
  /** The JSON of one row as a reader saw it. */
  rowText(seen: RowSeen): string;
}

/** For the streams: which rows really moved between two takes; kept only while switched on. */
export interface FleetJournal {
  setJournaling(on: boolean): void;
  takeChanges(): StoreChanges;
}

/** For the warmer: full reads are noted, and what changed can be encoded ahead of the next one. */
export interface FleetWarming {
  noteFullRead(): void;
  readWithin(ms: number): boolean;
  prepare(): number;
}

export interface FleetStore extends FleetIntake, FleetHosts, FleetReads, FleetJournal, FleetWarming {}
