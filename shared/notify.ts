// Notifications as they cross from a host to the hub: the title-free facts of one fire, the frames
// that carry them, and the key both ends agree identifies an episode's notification. Everything a
// collector and a hub both need lives here, so the hub never reaches into collector code.

import { z } from 'zod';

/** What a host fires on. */
export const HOST_TRIGGERS = ['blocked', 'done', 'context_high'] as const;
export type HostTrigger = (typeof HOST_TRIGGERS)[number];

/** What the hub hands its sinks: a host's fires, plus the end of a notified blocked episode. */
export const FLEET_TRIGGERS = [...HOST_TRIGGERS, 'resolved'] as const;
export type FleetTrigger = (typeof FLEET_TRIGGERS)[number];

const paneId = z.string().regex(/^%\d+$/);
const nullableString = z.string().max(4096).nullable();

/**
 * One notification as a collector sends it. No title and no screen text; `pending_summary` only
 * when the host shares prompts. The host is not in here: the hub binds it from the link.
 */
export const fleetNotificationSchema = z.looseObject({
  trigger: z.enum(FLEET_TRIGGERS),
  server: z.string().max(4096),
  pane: paneId,
  agent: z.string().max(128),
  /** The episode instant (epoch ms) this notification belongs to. */
  episode_ms: z.number().int().nonnegative(),
  /** When the host fired (host clock, epoch ms). */
  at: z.number().int().nonnegative(),
  state: z.string().max(32),
  detail: nullableString,
  locator: z.string().max(1024),
  repo: nullableString,
  branch: nullableString,
  context_pct: z.number().nullable(),
  pending_tool: nullableString,
  pending_summary: nullableString,
  /** The host saw a client showing this pane whose user typed within the last 30 s; absent from older hosts. */
  looking: z.boolean().nullable().optional(),
});
export type FleetNotification = z.infer<typeof fleetNotificationSchema>;

/** Key order of a fleet notification; pinned by a test. */
export const FLEET_NOTIFICATION_KEYS = [
  'trigger',
  'server',
  'pane',
  'agent',
  'episode_ms',
  'at',
  'state',
  'detail',
  'locator',
  'repo',
  'branch',
  'context_pct',
  'pending_tool',
  'pending_summary',
  'looking',
] as const satisfies readonly (keyof FleetNotification)[];

/** Collector → hub: a notification, kept and resent by the collector until acknowledged. */
export const notifyFrame = z.strictObject({
  type: z.literal('notify'),
  /** The notification's key on this host (see notificationKey); resends reuse it. */
  id: z.string().min(1).max(8192),
  event: fleetNotificationSchema,
});

/** Hub → collector: these notifications are durably recorded (or were already). */
export const notifyAckFrame = z.strictObject({
  type: z.literal('notify_ack'),
  ids: z.array(z.string().min(1).max(8192)).max(1024),
});

/**
 * The identity of one episode's notification on one host: the hub deduplicates on it (with the
 * host it binds), and the collector names its frames with it, so a resend is recognised whatever
 * the link did in between.
 */
export function notificationKey(e: Pick<FleetNotification, 'server' | 'pane' | 'trigger' | 'episode_ms'>): string {
  return JSON.stringify([e.server, e.pane, e.trigger, e.episode_ms]);
}
