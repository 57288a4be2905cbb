// A lean check for the frames a busy link sends most: deltas and heartbeats made of plain rows.
// It says "certainly valid" or "ask the schema": anything it does not recognise at a glance (an
// extra key, a quota, a title, an unusual number) goes to the zod schemas in protocol.ts, which stay
// the contract and word every refusal. So it may only accept what those schemas accept.

import { PROTOCOL_ROW_KEYS } from './row.js';
import { isPromptId } from './prompt-id-rule.js';
import { STATES } from './tokens.js';

const TEXT_MAX = 1024;
const PATH_MAX = 4096;
const EPOCH_RE = /^[0-9a-f]{16,64}$/;
const PANE_RE = /^%\d+$/;
const STATE_SET = new Set<unknown>(STATES);

type Check = (v: unknown) => boolean;
const str =
  (max: number): Check =>
  (v) =>
    typeof v === 'string' && v.length <= max;
const nullableStr =
  (max: number): Check =>
  (v) =>
    v === null || (typeof v === 'string' && v.length <= max);
const count: Check = (v) => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
const nullableNumber: Check = (v) => v === null || (typeof v === 'number' && Number.isFinite(v));
const bool: Check = (v) => typeof v === 'boolean';

/** Per key of a protocol row: the plain shape that needs no further look. `quota` must be null here. */
const ROW_CHECKS: Record<(typeof PROTOCOL_ROW_KEYS)[number], Check> = {
  pane: (v) => typeof v === 'string' && PANE_RE.test(v),
  agent: str(64),
  state: (v) => STATE_SET.has(v),
  detail: nullableStr(TEXT_MAX),
  since: count,
  since_ms: count,
  episode_ms: count,
  locator: str(TEXT_MAX),
  attention: bool,
  done: bool,
  session: nullableStr(TEXT_MAX),
  transcript: nullableStr(PATH_MAX),
  permission_request: nullableStr(TEXT_MAX),
  stamped_at_ms: nullableNumber,
  context: nullableNumber,
  context_at_ms: nullableNumber,
  muted: bool,
  tokens: nullableNumber,
  quota: (v) => v === null,
  cost_usd: nullableNumber,
  repo: nullableStr(TEXT_MAX),
  branch: nullableStr(TEXT_MAX),
  worktree: (v) => v === null || typeof v === 'boolean',
  pending_tool: nullableStr(TEXT_MAX),
  pending_call: nullableStr(PATH_MAX),
  pending_summary: nullableStr(PATH_MAX),
  server: str(PATH_MAX),
  host: str(253),
  prompt_id: (v) => v === null || isPromptId(v),
};
const ROW_KEY_COUNT = PROTOCOL_ROW_KEYS.length;

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype;
}

/** Exactly the row keys (prompt_id may be missing), each of the plain shape. */
export function plainRow(v: unknown): boolean {
  if (!isPlainObject(v)) return false;
  let n = 0;
  for (const k in v) {
    if (!Object.hasOwn(ROW_CHECKS, k)) return false;
    if (!ROW_CHECKS[k as keyof typeof ROW_CHECKS](v[k])) return false;
    n++;
  }
  // Every key seen is a known one, so the count says whether a required one is missing.
  return n === ROW_KEY_COUNT || (n === ROW_KEY_COUNT - 1 && !Object.hasOwn(v, 'prompt_id'));
}

const DELTA_KEYS = ['type', 'epoch', 'seq', 'server', 'incarnation', 'upserts', 'removals'];

function plainDelta(f: Record<string, unknown>): boolean {
  let n = 0;
  for (const k in f) {
    if (!DELTA_KEYS.includes(k)) return false;
    n++;
  }
  if (n !== DELTA_KEYS.length) return false;
  if (typeof f.epoch !== 'string' || !EPOCH_RE.test(f.epoch)) return false;
  if (!count(f.seq) || !str(PATH_MAX)(f.server)) return false;
  if (typeof f.incarnation !== 'string' || f.incarnation.length < 1 || f.incarnation.length > 128) return false;
  const { upserts, removals } = f;
  if (!Array.isArray(upserts) || !Array.isArray(removals)) return false;
  for (const r of upserts) if (!plainRow(r)) return false;
  for (const p of removals) if (typeof p !== 'string' || !PANE_RE.test(p)) return false;
  return true;
}

function plainHeartbeat(f: Record<string, unknown>): boolean {
  let n = 0;
  for (const k in f) {
    if (k !== 'type' && k !== 'at' && k !== 'seq') return false;
    n++;
  }
  if (!count(f.at)) return false;
  if ('seq' in f) return n === 3 && count(f.seq);
  return n === 2;
}

/**
 * True when `raw` (parsed JSON of a frame from a collector) is a delta or heartbeat the schema
 * certainly accepts, unchanged. False says nothing: the caller asks the schema.
 */
export function plainCollectorFrame(raw: unknown): boolean {
  if (!isPlainObject(raw)) return false;
  if (raw.type === 'delta') return plainDelta(raw);
  if (raw.type === 'heartbeat') return plainHeartbeat(raw);
  return false;
}
