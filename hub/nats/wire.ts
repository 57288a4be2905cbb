// What the owning hub writes to JetStream for a host and each of its rows, and how a following hub
// reads it back into a host record. The status carries everything a reader sees of the host (the
// fields `statusOf` reads); the sync position (epoch, sequence) stays with the link: a link that
// moves to another hub starts from a fresh snapshot, so no hub resumes another's half-written state.

import { z } from 'zod';
import type { HostStatus, Transport } from '../../shared/fleet.js';
import type { ProtocolRow } from '../../shared/row.js';
import type { HostRecord } from '../store/host-record.js';

export interface HostWire {
  v: 1;
  /** The hub that wrote it (its owner at the time). */
  hub: string;
  transport: Transport;
  reachable: boolean;
  synced: boolean;
  lastSeenMs: number | null;
  reason: string | null;
  collectorVersion: string | null;
  /** Servers in the host's current state and their incarnations; rows are matched to these. */
  servers: [string, string][];
  actionsAllowed: string[];
  actionsByAgent: HostStatus['actions_by_agent'];
  sharesPrompt: boolean | null;
  /** The hello's `remote_verbs`, so every hub judges a mute or preview as the owner would.
   * Absent from an older owner's status: read as none announced. */
  remoteVerbs?: string[];
  lagMs: number | null;
  lastRefusal: { reason: string; at_ms: number } | null;
  /** `sent - applied`, for the metrics every hub shows. */
  seqBehind: number | null;
}

export interface RowWire {
  /** The incarnation of the server the row belongs to. */
  i: string;
  r: ProtocolRow;
}

export interface OwnerWire {
  hub: string;
  /** The lease runs out at this wall-clock time unless renewed (a claim without `hub_lease`). */
  until_ms: number;
  /** The claim stands while its hub's liveness key (`l.<hub>`) does, not by `until_ms`: a claim is
   * written once, not renewed. Absent from an older hub's claims, which renew `until_ms`. */
  hub_lease?: true;
}

/** A hub's liveness (`l.<hub>`): its `hub_lease` claims stand until `until_ms`. */
export interface LivenessWire {
  hub: string;
  until_ms: number;
}

const ownerSchema = z.object({ hub: z.string().min(1), until_ms: z.number(), hub_lease: z.literal(true).optional() });
const livenessSchema = z.object({ hub: z.string().min(1), until_ms: z.number() });

/** A claim's text, checked; throws with the reason when it is not one. */
export function parseOwnerWire(text: string): OwnerWire {
  return ownerSchema.parse(JSON.parse(text));
}

export function parseLivenessWire(text: string): LivenessWire {
  return livenessSchema.parse(JSON.parse(text));
}

export function hostWire(h: HostRecord, hub: string): HostWire {
  return {
    v: 1,
    hub,
    transport: h.transport,
    reachable: h.reachable,
    synced: h.synced,
    lastSeenMs: h.lastSeenMs,
    reason: h.reason,
    collectorVersion: h.collectorVersion,
    servers: [...h.servers].map(([s, slot]) => [s, slot.incarnation]),
    actionsAllowed: h.actionsAllowed,
    actionsByAgent: h.actionsByAgent,
    sharesPrompt: h.sharesPrompt,
    remoteVerbs: h.remoteVerbs,
    lagMs: h.lagMs,
    lastRefusal: h.lastRefusal,
    seqBehind: h.sentSeq !== null && h.seq !== null ? Math.max(0, h.sentSeq - h.seq) : null,
  };
}

/** The wire text less the values that move on every heartbeat: a change here is written at once. */
export const wireShape = (w: HostWire): string =>
  JSON.stringify({ ...w, lastSeenMs: w.lastSeenMs === null, lagMs: w.lagMs === null, seqBehind: w.seqBehind === null });

/** Set a followed host's fields from its owner's status; `override` marks it down whatever it said. */
export function applyHostWire(h: HostRecord, w: HostWire, override: string | null): void {
  h.transport = w.transport;
  h.reachable = override === null && w.reachable;
  h.reason = override ?? w.reason;
  h.synced = w.synced;
  h.lastSeenMs = w.lastSeenMs;
  h.collectorVersion = w.collectorVersion;
  h.actionsAllowed = w.actionsAllowed.slice();
  h.actionsByAgent = w.actionsByAgent;
  h.sharesPrompt = w.sharesPrompt;
  h.remoteVerbs = w.remoteVerbs?.slice() ?? [];
  h.lagMs = w.lagMs;
  h.lastRefusal = w.lastRefusal;
  // Followed hosts hold no sync position of their own: shown only through the metrics gauge.
  h.seq = w.seqBehind === null ? null : 0;
  h.sentSeq = w.seqBehind;
  h.epoch = null;
  h.pending = null;
  h.owner = null;
  // `lost` is the sweep's to decide (from the same clocks on every hub); a link back clears it.
  h.lost = h.lost && !h.reachable;
}
