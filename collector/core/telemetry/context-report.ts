// The context lane's event formats: one payload in, one reading out. Pure.
// A reading with `pct: null` clears the gauge; `null` instead of a reading means "write nothing",
// which is what a payload we cannot trust must cause (a cleared gauge is itself a claim).

import { clampPct, count, findNumber, findString, objectOf } from './scan.js';

export interface ContextReport {
  /** The agent session the payload speaks for; null when the payload names none. */
  session: string | null;
  pct: number | null;
  tokens: number | null;
}

/** The event formats `tma event --kind context` reads; the rollout tail has its own reader. */
export const EVENT_FORMATS = ['claude-statusline-json', 'cursor-statusline-json', 'pi-context-json'] as const;

/** Claude Code reports a usable per-turn input count from this release on. */
const CLAUDE_TOKENS_FROM: readonly [number, number, number] = [2, 1, 132];

/** `major.minor.patch`, the patch's leading digits only (`2.1.132-rc.1` is 2.1.132); else null. */
export function parseTriple(text: string | null): [number, number, number] | null {
  if (text === null) return null;
  const parts = text.trim().split('.');
  if (parts.length < 3) return null;
  const major = /^\d+$/.test(parts[0]!) ? Number(parts[0]) : NaN;
  const minor = /^\d+$/.test(parts[1]!) ? Number(parts[1]) : NaN;
  const patchDigits = /^\d+/.exec(parts[2]!)?.[0];
  if (!Number.isSafeInteger(major) || !Number.isSafeInteger(minor) || patchDigits === undefined) return null;
  return [major, minor, Number(patchDigits)];
}

function atLeast(v: [number, number, number], min: readonly [number, number, number]): boolean {
  for (let i = 0; i < 3; i++) if (v[i] !== min[i]) return v[i]! > min[i]!;
  return true;
}

/**
 * Claude's statusline JSON. Before 2.1.132 the percentage could be cumulative and run past 100:
 * such a reading is dropped, never written and never allowed to clear. A payload without any
 * percentage (no context window yet, or nothing readable) clears.
 */
export function claudeStatusline(text: string): ContextReport | null {
  const session = findString(text, 'session_id');
  const version = parseTriple(findString(text, 'version'));
  // Read inside the context_window object: newer payloads carry other `used_percentage` keys
  // (rate_limits) that must not pass for the gauge. A payload without the key at all is read
  // whole, as the reference does; `context_window: null` has no reading (a clear).
  const scoped = objectOf(text, 'context_window');
  const ctx = scoped === undefined ? text : (scoped ?? '');
  const tokens = version !== null && atLeast(version, CLAUDE_TOKENS_FROM) && scoped !== undefined ? count(findNumber(ctx, 'total_input_tokens')) : null;
  const used = findNumber(ctx, 'used_percentage');
  if (used === null) return { session, pct: null, tokens: null };
  if (used < 0 || used > 100) return null;
  return { session, pct: Math.round(used), tokens };
}

/** Cursor's statusline JSON: a percentage only from a real window and a real count. */
export function cursorStatusline(text: string): ContextReport | null {
  const window = findNumber(text, 'context_window_size');
  if (window === null || window <= 0) return null;
  const used = findNumber(text, 'total_input_tokens');
  if (used === null || used < 0) return null;
  return { session: findString(text, 'session_id'), pct: clampPct((used / window) * 100), tokens: count(used) };
}

/** pi's context event: its own percentage when given, else tokens over a known window; no guessing. */
export function piContext(text: string): ContextReport | null {
  const session = findString(text, 'session_id');
  const rawTokens = findNumber(text, 'tokens');
  const tokens = count(rawTokens);
  const percent = findNumber(text, 'percent');
  if (percent !== null) return { session, pct: clampPct(percent), tokens };
  const window = findNumber(text, 'contextWindow');
  if (rawTokens === null || rawTokens < 0 || window === null || window <= 0) return null;
  return { session, pct: clampPct((rawTokens / window) * 100), tokens };
}

/** Dispatch on the manifest's format id; an id we do not know writes nothing. */
export function parseContextEvent(format: string, payload: string): ContextReport | null {
  switch (format) {
    case 'claude-statusline-json':
      return claudeStatusline(payload);
    case 'cursor-statusline-json':
      return cursorStatusline(payload);
    case 'pi-context-json':
      return piContext(payload);
    default:
      return null;
  }
}

/** A model label from a payload: the first `"model"` string, trimmed, 1..64 characters. */
export function payloadModel(text: string): string | null {
  const m = findString(text, 'model')?.trim() ?? '';
  return m.length >= 1 && m.length <= 64 ? m : null;
}

/** Claude's subscription usage: the rate-limit window closest to running out. */
export interface QuotaReading {
  pct: number;
  /** `five_hour` or `seven_day`, as Claude names the window. */
  window: string;
  /** When the window resets (ms), or null when not given. */
  resetsAt: number | null;
}

export interface UsageReport {
  costUsd: number | null;
  quota: QuotaReading | null;
}

const QUOTA_WINDOWS = ['five_hour', 'seven_day'] as const;

/**
 * Cost and quota from Claude's statusline JSON: `cost.total_cost_usd` (the session's running
 * cost, present on every recent payload) and `rate_limits.{five_hour,seven_day}` (subscribers
 * only, after the first response; `resets_at` in epoch seconds). What is absent stays absent.
 */
export function claudeUsage(text: string): UsageReport {
  const cost = objectOf(text, 'cost');
  const usd = cost ? findNumber(cost, 'total_cost_usd') : null;
  let quota: QuotaReading | null = null;
  const limits = objectOf(text, 'rate_limits');
  for (const window of limits ? QUOTA_WINDOWS : []) {
    const w = objectOf(limits!, window);
    if (!w) continue;
    const pct = findNumber(w, 'used_percentage');
    if (pct === null || pct < 0 || pct > 100) continue;
    const resets = findNumber(w, 'resets_at');
    const reading = { pct: Math.round(pct), window, resetsAt: resets !== null && resets >= 0 ? Math.trunc(resets * 1000) : null };
    if (quota === null || reading.pct > quota.pct) quota = reading;
  }
  return { costUsd: usd !== null && usd >= 0 ? usd : null, quota };
}
