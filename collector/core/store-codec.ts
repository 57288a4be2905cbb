// The pane-option store: which keys exist, and how a stamped tuple is read back from them.
// Reading is strict on the closed vocabularies (a token we cannot read makes the whole tuple
// unreadable, never half-read) and lenient on legacy second-resolution clocks.

import { isSource, isState } from '../../shared/tokens.js';
import type { StampedState } from './types.js';

export const KEY = {
  name: '@agent_name',
  state: '@agent_state',
  detail: '@agent_detail',
  source: '@agent_source',
  evidenceAt: '@agent_evidence_at',
  since: '@agent_since',
  stampedAt: '@agent_stamped_at',
  attention: '@agent_attention',
  notifiedAt: '@agent_notified_at',
  turnAt: '@agent_turn_at',
  hash: '@agent_hash',
  pid: '@agent_pid',
  session: '@agent_session',
  subagents: '@agent_subagents',
  titleMatchPid: '@tma_title_match_pid',
  regDeadSince: '@tma_reg_dead_since',
  ignore: '@agent_ignore',
  muteUntil: '@agent_mute_until',
  contextPct: '@agent_context_pct',
  contextAt: '@agent_context_at',
  tokens: '@agent_tokens',
  tokensAt: '@agent_tokens_at',
  contextNotifiedAt: '@agent_context_notified_at',
  model: '@agent_model',
  permissionRequest: '@agent_permission_request',
  apiEndpoint: '@agent_api_endpoint',
  /**
   * When the agent sent the last hook event that stamped the pane (epoch ms). Only hook events
   * write it: a screen read that corroborates a hook claim moves evidence_at (restarting decay),
   * and must not make a hook event sent after the claim look older than it.
   */
  hookAt: '@agent_hook_at',
  windowSummary: '@agent_summary',
  sessionSummary: '@agent_session_summary',
  setpfOk: '@tma_setpf_ok',
  lastPoll: '@tma_last_poll',
  /** Server scope: when a collector that watches this server's output last swept it (epoch ms). */
  collectorAt: '@tma_collector_at',
  probe: '@__tma_probe',
} as const;

/** The stamped tuple, in the order list-panes reads it. */
export const TUPLE_KEYS = [
  KEY.name,
  KEY.state,
  KEY.detail,
  KEY.source,
  KEY.evidenceAt,
  KEY.since,
  KEY.stampedAt,
  KEY.attention,
  KEY.notifiedAt,
  KEY.turnAt,
  KEY.hash,
  KEY.pid,
  KEY.session,
  KEY.subagents,
] as const;

/** Per-pane bookkeeping read after the tuple, in list-panes order. */
export const BOOKKEEPING_KEYS = [
  KEY.titleMatchPid,
  KEY.regDeadSince,
  KEY.ignore,
  KEY.muteUntil,
  KEY.contextPct,
  KEY.contextAt,
  KEY.tokens,
  KEY.tokensAt,
  KEY.contextNotifiedAt,
  KEY.model,
  KEY.permissionRequest,
  KEY.apiEndpoint,
] as const;

export const ROLLUP_KEYS = [KEY.windowSummary, KEY.sessionSummary] as const;

/**
 * Everything an agent's exit takes with it. This is the union of the v0.4.4 set and the newer
 * contract page's (quota, cost and pending-tool keys): unsetting a key nobody wrote is harmless,
 * while leaving a newer writer's key behind would outlive the agent. The order follows the newer
 * page, which is the v0.4.4 order with the extras slotted in.
 * Deliberately absent: @agent_action, @tma_watch_pid and @agent_mute_until (their owners outlive
 * the agent), and @agent_ignore (the user's, never touched).
 */
export const REMOVAL_SET = [
  KEY.state,
  KEY.detail,
  KEY.source,
  KEY.evidenceAt,
  KEY.since,
  KEY.stampedAt,
  KEY.attention,
  KEY.notifiedAt,
  KEY.turnAt,
  KEY.hash,
  KEY.pid,
  KEY.name,
  KEY.session,
  KEY.subagents,
  KEY.contextPct,
  KEY.contextAt,
  KEY.tokens,
  KEY.tokensAt,
  KEY.contextNotifiedAt,
  '@agent_quota_pct',
  '@agent_quota_window',
  '@agent_quota_resets_at',
  '@agent_quota_at',
  '@agent_cost_usd',
  KEY.model,
  KEY.permissionRequest,
  '@agent_pending_tool',
  '@agent_pending_call',
  '@agent_pending_summary',
  KEY.apiEndpoint,
  KEY.hookAt,
  KEY.titleMatchPid,
  KEY.regDeadSince,
  // Ours: which prompt the pane shows and which one was answered mean nothing once the agent is gone.
  '@tma_prompt_id',
  '@tma_answered',
  '@tma_hook_request',
] as const;

/**
 * A stored hook time further than this ahead of an event is a backward clock step, not an event
 * sent later: hook processes start seconds late under load, never a minute.
 */
export const HOOK_ORDER_WINDOW_MS = 60_000;

/** A since further than this ahead of stamped_at is a backward clock step, not a write in flight. */
export const CLOCK_STEP_SKEW_MS = 2000;

/** Non-zero clocks below this are legacy epoch seconds. */
const LEGACY_SECONDS_BELOW = 1_000_000_000_000;
const U32_MAX = 0xffff_ffffn;
const U64_MAX = 0xffff_ffff_ffff_ffffn;
const DIGITS = /^[0-9]+$/;

export type DecodeResult = { ok: true; stamp: StampedState | null } | { ok: false; problem: string };

/** Option values as read: a missing or empty option are the same thing (tmux cannot tell them apart). */
export type OptionValues = Record<string, string | undefined>;

class DecodeError extends Error {}

function present(opts: OptionValues, key: string): string | null {
  const v = opts[key];
  return v === undefined || v === '' ? null : v;
}

function unsigned(opts: OptionValues, key: string, max: bigint): bigint | null {
  const raw = present(opts, key);
  if (raw === null) return null;
  if (!DIGITS.test(raw)) throw new DecodeError(`non-numeric ${key}: ${JSON.stringify(raw)}`);
  const n = BigInt(raw);
  if (n > max) throw new DecodeError(`${key} out of range: ${JSON.stringify(raw)}`);
  return n;
}

/** A clock option in ms; second-resolution values from older writers are scaled up. */
function clock(opts: OptionValues, key: string): number | null {
  const n = unsigned(opts, key, BigInt(Number.MAX_SAFE_INTEGER));
  if (n === null) return null;
  const ms = Number(n);
  return ms !== 0 && ms < LEGACY_SECONDS_BELOW ? ms * 1000 : ms;
}

/**
 * Read the stamped tuple. `stamp: null` means the pane is not stamped; a problem means something
 * is stamped that we cannot read (a second writer's foreign token, a corrupted number).
 */
export function decodeStamp(opts: OptionValues): DecodeResult {
  try {
    const state = present(opts, KEY.state);
    if (state === null) return { ok: true, stamp: null };
    if (!isState(state)) throw new DecodeError(`unknown ${KEY.state} token: ${JSON.stringify(state)}`);
    const source = present(opts, KEY.source) ?? 'capture';
    if (!isSource(source)) throw new DecodeError(`unknown ${KEY.source} token: ${JSON.stringify(source)}`);
    const pid = unsigned(opts, KEY.pid, U32_MAX);
    const subagents = present(opts, KEY.subagents);
    const stamp: StampedState = {
      state,
      detail: present(opts, KEY.detail),
      source,
      evidenceAt: clock(opts, KEY.evidenceAt) ?? 0,
      since: clock(opts, KEY.since) ?? 0,
      stampedAt: clock(opts, KEY.stampedAt) ?? 0,
      attention: opts[KEY.attention] === '1',
      notifiedAt: clock(opts, KEY.notifiedAt),
      turnAt: clock(opts, KEY.turnAt) ?? 0,
      hash: unsigned(opts, KEY.hash, U64_MAX),
      pid: pid === null ? 0 : Number(pid),
      session: present(opts, KEY.session),
      subagents: subagents === null ? [] : subagents.split(/\s+/).filter((s) => s !== ''),
    };
    return { ok: true, stamp };
  } catch (e) {
    if (e instanceof DecodeError) return { ok: false, problem: e.message };
    throw e;
  }
}

/** A since stranded ahead of the stamp by more than the skew came from a backward clock step. */
export function isClockStepped(s: Pick<StampedState, 'since' | 'stampedAt'>): boolean {
  return s.since > s.stampedAt + CLOCK_STEP_SKEW_MS;
}

/**
 * stamped_at is written last, so a stamp older than the fields written before it means the
 * reader caught a chain mid-flight. A clock step would otherwise latch that forever.
 */
export function isInProgress(s: Pick<StampedState, 'since' | 'stampedAt' | 'evidenceAt'>): boolean {
  return !isClockStepped(s) && (s.stampedAt < s.since || s.stampedAt < s.evidenceAt);
}

/** The instant the current episode last became noteworthy (a new state, or a fresh completion). */
export function episodeAt(s: Pick<StampedState, 'since' | 'turnAt'>): number {
  return Math.max(s.since, s.turnAt);
}

/** Bytes that would break a `#{?…,…,…}` format, so such a detail is stored empty instead. */
const FORMAT_UNSAFE = /[#{},\s\u0000-\u001f\u007f-\u009f]/u;

/** The detail as it may be written: '' when none or when it would corrupt a conditional write. */
export function writableDetail(detail: string | null): string {
  return detail === null || FORMAT_UNSAFE.test(detail) ? '' : detail;
}
