// The fleet wire protocol between a collector and a hub. One JSON object per frame: a WebSocket
// message, or one line on stdio (the ssh transport). Both ends validate every frame they receive
// against these schemas; a frame that fails is answered with an `error` frame and dropped.
//
// A link's life: collector `hello` → hub `welcome` (with the last sequence it applied for this
// epoch, if any) → collector `snapshot` frames ending with `complete: true`, or a replay of the
// deltas after that sequence → `delta` / `server` frames, `heartbeat`s both ways, and `act`
// requests (hub → collector) answered by `act_result` (collector → hub).

import { z } from 'zod';
import { protocolRowSchema } from './row-schema.js';
import { notifyAckFrame, notifyFrame } from './notify.js';
import { plainCollectorFrame } from './frame-fast-path.js';
import { PROMPT_ID_RE, PROMPT_ID_RULE } from './prompt-id-rule.js';

export { notifyAckFrame, notifyFrame } from './notify.js';

export const PROTOCOL_VERSION = 1;

/** Largest frame either side accepts, in bytes of its JSON text. */
export const MAX_FRAME_BYTES = 1 << 20;

/** A collector sends a heartbeat this often; a link silent for three intervals is dead. */
export const HEARTBEAT_MS = 5000;
export const DEAD_AFTER_HEARTBEATS = 3;

/** Requests besides `act` a hub may send a collector; a host announces the ones it answers. */
export const REMOTE_VERBS = ['mute', 'preview'] as const;
export type RemoteVerb = (typeof REMOTE_VERBS)[number];

const hostName = z
  .string()
  .min(1)
  .max(253)
  .regex(/^[A-Za-z0-9._-]+$/, 'host names use letters, digits, dot, dash, underscore');
const epoch = z.string().regex(/^[0-9a-f]{16,64}$/, 'an epoch is 16–64 lowercase hex digits');
const seq = z.number().int().nonnegative();
const paneId = z.string().regex(/^%\d+$/);
const serverPath = z.string().max(4096);
const incarnation = z.string().min(1).max(128);

/** One tmux server as a collector publishes it: the socket path and which lifetime of it. */
export const serverStateSchema = z.strictObject({
  server: serverPath,
  incarnation,
  rows: z.array(protocolRowSchema),
});
export type ServerState = z.infer<typeof serverStateSchema>;

/** How a host fires an action on an agent: keys into the pane, its HTTP API, or a command. */
export const actionLane = z.enum(['keys', 'api', 'exec']);
export type ActionLane = z.infer<typeof actionLane>;

export const helloFrame = z.strictObject({
  type: z.literal('hello'),
  protocol: z.number().int().positive(),
  host: hostName,
  collector_version: z.string().max(64),
  epoch,
  /** Action names this host lets a hub fire on its panes. */
  actions_allowed: z.array(z.string().regex(/^[a-z0-9_-]+$/)).max(256),
  /** Sender's clock (epoch ms) when it said hello: the hub's first clock-offset sample. */
  at: z.number().int().nonnegative().optional(),
  /**
   * agent → action → lane, for the allowed actions each agent has a transport for ("*" stands
   * for every agent): lets a hub offer only what this host would fire.
   */
  actions_by_agent: z
    .record(
      z
        .string()
        .regex(/^[A-Za-z0-9._*-]+$/)
        .max(64),
      z.record(z.string().regex(/^[a-z0-9_-]+$/), actionLane),
    )
    .optional(),
  /** Whether this host's rows carry what a prompt asks (`[remote] share_prompt`); absent from older collectors. */
  share_prompt: z.boolean().optional(),
  /** Requests besides `act` this host answers (`mute`, `preview`); absent from older collectors, which answer none. */
  remote_verbs: z
    .array(
      z
        .string()
        .regex(/^[a-z_-]+$/)
        .max(32),
    )
    .max(16)
    .optional(),
});

export const welcomeFrame = z.strictObject({
  type: z.literal('welcome'),
  protocol: z.number().int().positive(),
  /** Last sequence the hub applied for this epoch; null asks for a fresh snapshot. */
  resume_from: seq.nullable(),
  /** The host name this link publishes as, when the hub binds it (an ssh entry's name) and it
   * differs from the hello's. Sent only then, so older collectors never see it. */
  host: hostName.optional(),
  /** Every hub serving this fleet (hub.toml `[fleet] hubs`), so a collector can fail over to one it
   * was not given. Sent only when configured: a collector that predates the key never sees it. */
  hubs: z
    .array(
      z
        .string()
        .max(2048)
        .regex(/^wss?:\/\/\S+$/, 'a ws:// or wss:// URL'),
    )
    .max(64)
    .optional(),
});

export const snapshotFrame = z.strictObject({
  type: z.literal('snapshot'),
  epoch,
  /** The sequence the snapshot is consistent with; deltas continue from seq + 1. */
  seq,
  servers: z.array(serverStateSchema),
  /** Large fleets split a snapshot; only the last frame says complete. */
  complete: z.boolean(),
});

export const deltaFrame = z.strictObject({
  type: z.literal('delta'),
  epoch,
  seq,
  server: serverPath,
  incarnation,
  upserts: z.array(protocolRowSchema),
  removals: z.array(paneId),
});

/** A server came up, restarted (new incarnation: its old rows are void), or went away. */
export const serverFrame = z.strictObject({
  type: z.literal('server'),
  epoch,
  seq,
  event: z.enum(['appeared', 'incarnation', 'gone']),
  server: serverPath,
  incarnation,
});

export const heartbeatFrame = z.strictObject({
  type: z.literal('heartbeat'),
  /** Sender's clock, for lag estimates only: never compared with row timestamps. */
  at: z.number().int().nonnegative(),
  /** Collector → hub: the last sequence sent. */
  seq: seq.optional(),
});

export const errorFrame = z.strictObject({
  type: z.literal('error'),
  code: z.enum(['bad-json', 'bad-frame', 'unknown-type', 'too-large', 'protocol', 'unauthorized', 'host-mismatch', 'internal', 'host-busy', 'rate-limited']),
  message: z.string().max(1000),
});

export const actRequestFrame = z.strictObject({
  type: z.literal('act'),
  /** Correlates the result; unique per hub. */
  id: z.string().min(1).max(128),
  action: z.string().regex(/^[a-z0-9_-]+$/),
  server: serverPath,
  pane: paneId,
  expect_episode_ms: z.number().int().nonnegative().nullable(),
  expect_permission_request: z.string().max(256).nullable(),
  /** The prompt_id of the row the person saw; absent from older hubs. */
  expect_prompt: z.string().regex(PROMPT_ID_RE, PROMPT_ID_RULE).nullable().optional(),
  /** Idempotency key: the same slot never fires twice on the host. */
  slot: z
    .string()
    .min(1)
    .max(200)
    .regex(/^[A-Za-z0-9._:-]+$/),
  /** Who asked, for the host's audit log. */
  principal: z.string().max(128),
  /** Epoch ms on the hub's clock after which the hub has given up; informational on the host. */
  deadline_ms: z.number().int().nonnegative(),
});

/**
 * What one fire of an action came to. The set is closed: consumers branch on it (and the hub
 * counts by it in /metrics), so a new kind of result is a new reason, never a new outcome.
 */
export const ACT_OUTCOMES = ['sent', 'replied', 'spawned', 'exited', 'timeout', 'refused', 'vanished', 'error'] as const;

/** The local act result (`tma act --json`) plus where it ran. */
export const actResultSchema = z.looseObject({
  schema: z.literal(1),
  action: z.string(),
  pane: z.string(),
  outcome: z.string(),
  exit_code: z.number().int(),
  reason: z.string().nullable(),
  cached: z.boolean().optional(),
  host: z.string(),
  server: z.string(),
});
export type ActResult = z.infer<typeof actResultSchema>;

export const actResultFrame = z.strictObject({
  type: z.literal('act_result'),
  id: z.string().min(1).max(128),
  result: actResultSchema,
});

/** Silence (or unsilence) a pane's notifications on the host: `for_ms` null means indefinitely. */
export const muteRequestFrame = z.strictObject({
  type: z.literal('mute'),
  id: z.string().min(1).max(128),
  server: serverPath,
  pane: paneId,
  for_ms: z.number().int().positive().nullable(),
  clear: z.boolean(),
  principal: z.string().max(128),
});

/** What a remote mute came to: `muted`, `unmuted`, `refused` (the host's policy), `vanished`, `error`. */
export const muteResultSchema = z.looseObject({
  schema: z.literal(1),
  pane: z.string(),
  outcome: z.string(),
  exit_code: z.number().int(),
  reason: z.string().nullable(),
  /** Host clock, epoch ms, the mute ends; null for indefinitely or a clear. */
  until_ms: z.number().int().nullable(),
  host: z.string(),
  server: z.string(),
});
export type MuteResult = z.infer<typeof muteResultSchema>;

export const muteResultFrame = z.strictObject({ type: z.literal('mute_result'), id: z.string().min(1).max(128), result: muteResultSchema });

/** A dry run on the host: what each named action would do on the pane right now. Nothing is sent. */
export const previewRequestFrame = z.strictObject({
  type: z.literal('preview'),
  id: z.string().min(1).max(128),
  server: serverPath,
  pane: paneId,
  actions: z
    .array(z.string().regex(/^[a-z0-9_-]+$/))
    .min(1)
    .max(64),
  expect_episode_ms: z.number().int().nonnegative().nullable(),
  expect_permission_request: z.string().max(256).nullable(),
  expect_prompt: z.string().regex(PROMPT_ID_RE, PROMPT_ID_RULE).nullable(),
  principal: z.string().max(128),
});

/** One action's verdict in a preview: `lane` keys/api/exec, `keys` the keys a keys lane would type. */
export const previewVerdictSchema = z.looseObject({
  name: z.string(),
  fireable: z.boolean(),
  reason: z.string().nullable(),
  lane: actionLane.nullable(),
  keys: z.array(z.string()).nullable(),
});

export const previewResultSchema = z.looseObject({
  schema: z.literal(1),
  host: z.string(),
  server: z.string(),
  pane: z.string(),
  /** False when the pane is gone (then every verdict is refused with `pane-gone`). */
  found: z.boolean(),
  agent: z.string().nullable(),
  state: z.string().nullable(),
  prompt_id: z.string().nullable(),
  /** What the prompt asks; null when nothing or when the host keeps it (`[remote] share_prompt = false`). */
  pending_summary: z.string().nullable(),
  actions: z.array(previewVerdictSchema),
});
export type PreviewResult = z.infer<typeof previewResultSchema>;

export const previewResultFrame = z.strictObject({ type: z.literal('preview_result'), id: z.string().min(1).max(128), result: previewResultSchema });

/** Frames a collector sends. */
export const collectorFrame = z.discriminatedUnion('type', [
  helloFrame,
  snapshotFrame,
  deltaFrame,
  serverFrame,
  heartbeatFrame,
  errorFrame,
  actResultFrame,
  notifyFrame,
  muteResultFrame,
  previewResultFrame,
]);
export type CollectorFrame = z.infer<typeof collectorFrame>;

/** Frames a hub sends. */
export const hubFrame = z.discriminatedUnion('type', [
  welcomeFrame,
  heartbeatFrame,
  errorFrame,
  actRequestFrame,
  notifyAckFrame,
  muteRequestFrame,
  previewRequestFrame,
]);
export type HubFrame = z.infer<typeof hubFrame>;

export type FrameError = z.infer<typeof errorFrame>;

const COLLECTOR_TYPES = new Set(['hello', 'snapshot', 'delta', 'server', 'heartbeat', 'error', 'act_result', 'notify', 'mute_result', 'preview_result']);
const HUB_TYPES = new Set(['welcome', 'heartbeat', 'error', 'act', 'notify_ack', 'mute', 'preview']);

/**
 * Decode one frame's text. Never throws: a bad frame comes back as the error frame to answer it
 * with, so neither side can be crashed by what the other sends.
 */
export function decodeFrame<T>(text: string, side: 'from-collector' | 'from-hub'): { ok: true; frame: T } | { ok: false; error: FrameError; type?: string } {
  // A UTF-16 unit is at most 3 bytes of UTF-8: most frames are too short to need counting.
  if (text.length * 3 > MAX_FRAME_BYTES && Buffer.byteLength(text, 'utf8') > MAX_FRAME_BYTES) {
    return { ok: false, error: { type: 'error', code: 'too-large', message: `frame larger than ${MAX_FRAME_BYTES} bytes` } };
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return { ok: false, error: { type: 'error', code: 'bad-json', message: 'frame is not valid JSON' } };
  }
  const type = typeof raw === 'object' && raw !== null ? (raw as { type?: unknown }).type : undefined;
  const known = side === 'from-collector' ? COLLECTOR_TYPES : HUB_TYPES;
  if (typeof type !== 'string' || !known.has(type)) {
    return { ok: false, error: { type: 'error', code: 'unknown-type', message: `unknown frame type ${JSON.stringify(type ?? null).slice(0, 60)}` } };
  }
  // Plain deltas and heartbeats, most of a busy hub's input, need no schema walk; anything else
  // (and every refusal) is the schema's to decide.
  if (side === 'from-collector' && plainCollectorFrame(raw)) return { ok: true, frame: raw as T };
  const schema = side === 'from-collector' ? collectorFrame : hubFrame;
  const r = schema.safeParse(raw);
  if (!r.success) {
    const i = r.error.issues[0]!;
    return { ok: false, type, error: { type: 'error', code: 'bad-frame', message: `${type}: ${i.path.join('.') || '(frame)'}: ${i.message}`.slice(0, 1000) } };
  }
  return { ok: true, frame: r.data as T };
}

export function encodeFrame(frame: CollectorFrame | HubFrame): string {
  return JSON.stringify(frame);
}
