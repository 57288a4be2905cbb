// The fleet document: every agent row the hub holds, plus where each host's rows came from and
// how fresh they are. Rows keep the protocol form; fleet-only facts are additive.

import type { ProtocolRow } from './row.js';
import { PROTOCOL_ROW_KEYS } from './row.js';

/** A fleet row is a protocol row plus `stale`: its host's link is down and this is the last word. */
export type FleetRow = ProtocolRow & { stale: boolean };

export const FLEET_ROW_KEYS = [...PROTOCOL_ROW_KEYS, 'stale'] as const;

export type Transport = 'ws' | 'ssh' | 'local';

export interface HostStatus {
  host: string;
  transport: Transport;
  /** The link is up and heartbeats arrive. */
  reachable: boolean;
  /** Rows are kept but no longer confirmed. */
  stale: boolean;
  /** Hub clock, epoch ms, of the last frame from this host; null if never heard from. */
  last_seen_ms: number | null;
  /** Why the host is unreachable (e.g. a refused host key); null when fine or unknown. */
  reason: string | null;
  collector_version: string | null;
  servers: { server: string; incarnation: string; rows: number }[];
  /** Action names the host's collector lets the hub fire remotely (from its hello); [] if none. */
  actions_allowed: string[];
  schema: 1;
  /** The last refusal of a link for this host that a retry cannot fix (wrong host name, a second
   * collector, an old protocol), with the hub time it happened; null when none since it last linked. */
  last_refusal: { reason: string; at_ms: number } | null;
  /** How far the host's clock runs ahead of the hub's (ms; transit included); null until heard. */
  clock_offset_ms: number | null;
  /** agent → action → lane the host announced ("*" = any agent); null from older collectors. */
  actions_by_agent: Record<string, Record<string, 'keys' | 'api' | 'exec'>> | null;
  /** Whether the host shares what its prompts ask (`[remote] share_prompt`); null from older collectors. */
  shares_prompt: boolean | null;
}

export const HOST_STATUS_KEYS = [
  'host',
  'transport',
  'reachable',
  'stale',
  'last_seen_ms',
  'reason',
  'collector_version',
  'servers',
  'actions_allowed',
  'schema',
  'last_refusal',
  'clock_offset_ms',
  'actions_by_agent',
  'shares_prompt',
] as const satisfies readonly (keyof HostStatus)[];

export interface FleetDocument {
  schema: 1;
  agents: FleetRow[];
  hosts: HostStatus[];
}

export function fleetRowObject(row: ProtocolRow, stale: boolean): FleetRow {
  const out: Record<string, unknown> = {};
  for (const k of PROTOCOL_ROW_KEYS) out[k] = (row as Record<string, unknown>)[k] ?? null;
  out.stale = stale;
  return out as FleetRow;
}

export function hostStatusObject(h: HostStatus): HostStatus {
  const out: Record<string, unknown> = {};
  for (const k of HOST_STATUS_KEYS) out[k] = h[k];
  return out as unknown as HostStatus;
}
