// The pure half of `tma event`: what a hook payload means for a pane, and what to write about it.
// The payload is untrusted text: the session id is found by a hand scan rather than a JSON parse,
// so a truncated or otherwise malformed payload still attributes its event, and anything copied
// into a pane option is validated first.

import { compileRustRegex } from './rust-regex.js';
import type { AgentManifest, HookMapEntry, StampedState, State } from './types.js';

// ---------------------------------------------------------------------------------------------
// Step 7: the session the event belongs to

const SESSION_KEY = '"session_id"';

function skipSpace(s: string, i: number): number {
  while (i < s.length && /\s/.test(s[i] as string)) i++;
  return i;
}

/**
 * Value of the first `"session_id": "…"` key in the raw payload. Occurrences not followed by a
 * colon are values, not keys, and are passed over; the first real key decides, so a non-string
 * value (or an unterminated string) yields null rather than a later match. `""` is a valid answer.
 */
export function eventSession(raw: string): string | null {
  let from = 0;
  for (;;) {
    const at = raw.indexOf(SESSION_KEY, from);
    if (at < 0) return null;
    let i = skipSpace(raw, at + SESSION_KEY.length);
    if (raw[i] !== ':') {
      from = at + 1;
      continue;
    }
    i = skipSpace(raw, i + 1);
    if (raw[i] !== '"') return null;
    return readString(raw, i + 1);
  }
}

/** A JSON-ish string body starting at `i`; `\n` and `\t` decode, any other `\X` stands for X. */
export function readString(raw: string, i: number): string | null {
  let out = '';
  while (i < raw.length) {
    const c = raw[i] as string;
    if (c === '"') return out;
    if (c === '\\') {
      const next = raw[i + 1];
      if (next === undefined) return null;
      out += next === 'n' ? '\n' : next === 't' ? '\t' : next;
      i += 2;
      continue;
    }
    out += c;
    i++;
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// Step 8: the manifest's hook map

export type MappedEvent =
  | { kind: 'subagent-start' }
  | { kind: 'subagent-stop' }
  | { kind: 'unmapped' }
  | { kind: 'register' }
  | { kind: 'deregister' }
  | { kind: 'state'; state: State; detail: string | null; turnEnd: boolean };

const matcherCache = new Map<string, RegExp | null>();

/**
 * A hook matcher, compiled from the manifests' Rust dialect the same way rule patterns are. Unlike
 * a bad rule (which fails the manifest at load), a bad matcher only fails its own event: null,
 * and a null matcher never matches. Cached: a long-lived caller maps many events with few matchers.
 */
export function compileMatcher(source: string): RegExp | null {
  const cached = matcherCache.get(source);
  if (cached !== undefined) return cached;
  let re: RegExp | null;
  try {
    re = compileRustRegex(source);
  } catch {
    re = null;
  }
  matcherCache.set(source, re);
  return re;
}

function mapEntry(entry: HookMapEntry): MappedEvent {
  const claim = entry.claim;
  if (claim.kind === 'lifecycle') return { kind: claim.phase === 'start' ? 'register' : 'deregister' };
  return { kind: 'state', state: claim.state, detail: claim.detail, turnEnd: entry.turnEnd };
}

/**
 * The meaning of hook `kind` for this agent. Subagent bookkeeping is fixed and agent-independent.
 * Among the entries for the event, a matching matcher wins at once; the first entry without a
 * matcher is only the fallback, so a later, more specific entry can still beat it.
 */
export function mapEvent(manifest: AgentManifest, kind: string, raw: string): MappedEvent {
  if (kind === 'SubagentStart') return { kind: 'subagent-start' };
  if (kind === 'SubagentStop') return { kind: 'subagent-stop' };
  if (manifest.hooks === null) return { kind: 'unmapped' };
  let fallback: HookMapEntry | null = null;
  for (const entry of manifest.hooks.map) {
    if (entry.event !== kind) continue;
    if (entry.matcher === null) {
      fallback ??= entry;
      continue;
    }
    const re = compileMatcher(entry.matcher);
    if (re !== null && re.test(raw)) return mapEntry(entry);
  }
  return fallback === null ? { kind: 'unmapped' } : mapEntry(fallback);
}

// ---------------------------------------------------------------------------------------------
// Step 9: the decision

export type NotifyTrigger = 'blocked' | 'done';

export interface NotifyConfig {
  /** notify.from_event / TMA_NOTIFY_FROM_EVENT=1 */
  fromEvent: boolean;
  /** notify.on; the default is ["blocked"]. */
  on: readonly NotifyTrigger[];
}

export interface DecideInput {
  mapped: MappedEvent;
  stored: StampedState | null;
  eventSession: string | null;
  now: number;
  notify: NotifyConfig;
}

export interface StampDecision {
  kind: 'stamp';
  state: State;
  detail: string | null;
  attention: boolean;
  /** Write @agent_session with this value; null = leave it. */
  registerSession: string | null;
  recordTurn: boolean;
  notify: NotifyTrigger | null;
  /** A lifecycle start: the extras of step 11 follow the stamp. */
  register: boolean;
}

export type EventDecision = { kind: 'ignore' } | { kind: 'nothing' } | { kind: 'subagents'; list: string[] } | { kind: 'remove' } | StampDecision;

function subagentList(mapped: 'subagent-start' | 'subagent-stop', stored: StampedState | null, session: string): string[] {
  const current = stored?.subagents ?? [];
  if (mapped === 'subagent-stop') return current.filter((s) => s !== session);
  return current.includes(session) ? current.slice() : [...current, session];
}

/**
 * The attention raise of a hook stamp. Blocked raises on entry. Idle raises after work, or at a
 * turn end that is not already standing: two channels reporting the same turn end (codex) must
 * not raise twice.
 */
export function hookAttention(state: State, prev: State | null, turnEnd: boolean, standing: boolean): boolean {
  if (state === 'blocked') return prev !== 'blocked';
  if (state === 'idle') return prev === 'working' || (turnEnd && !standing);
  return false;
}

export function decideEvent({ mapped, stored, eventSession, now, notify }: DecideInput): EventDecision {
  if (mapped.kind === 'subagent-start' || mapped.kind === 'subagent-stop') {
    // Bookkeeping is not owner-checked; without a session there is nothing to add or remove.
    if (eventSession === null || eventSession === '') return { kind: 'nothing' };
    return { kind: 'subagents', list: subagentList(mapped.kind, stored, eventSession) };
  }
  if (mapped.kind === 'unmapped') return { kind: 'nothing' };

  // While subagents run, their hooks fire into the same pane; only the owner's events count.
  if (stored !== null && stored.subagents.length > 0) {
    if (stored.session === null || eventSession === null || stored.session !== eventSession) {
      return { kind: 'ignore' };
    }
  }

  if (mapped.kind === 'deregister') return { kind: 'remove' };
  if (mapped.kind === 'register') {
    return {
      kind: 'stamp',
      state: 'idle',
      detail: null,
      attention: false,
      registerSession: eventSession,
      recordTurn: false,
      notify: null,
      register: true,
    };
  }

  const { state, detail, turnEnd } = mapped;
  const attention = hookAttention(state, stored?.state ?? null, turnEnd, stored?.attention ?? false);
  const trigger: NotifyTrigger | null = !attention ? null : state === 'blocked' ? 'blocked' : state === 'idle' ? 'done' : null;
  const alreadyNotified = stored !== null && stored.notifiedAt !== null && stored.notifiedAt >= now;
  return {
    kind: 'stamp',
    state,
    detail,
    attention,
    registerSession: stored === null || stored.session === null ? eventSession : null,
    recordTurn: turnEnd && state === 'idle' && attention,
    notify: notify.fromEvent && trigger !== null && notify.on.includes(trigger) && !alreadyNotified ? trigger : null,
    register: false,
  };
}

/**
 * The @agent_notified_at value a notifying stamp writes: never earlier than the stored episode
 * when the state is unchanged, so the dedup against that episode keeps holding.
 */
export function notifiedAtFor(stored: StampedState | null, state: State, now: number): number {
  if (stored === null || stored.state !== state) return now;
  return Math.max(now, stored.since, stored.turnAt);
}

// ---------------------------------------------------------------------------------------------
// Steps 11 and 12: values copied from the payload into pane options

/** Top-level members of a JSON object payload; anything else has none. */
export function topLevel(payload: string): Record<string, unknown> | null {
  try {
    const v: unknown = JSON.parse(payload);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const REQUEST_ID = /^[A-Za-z0-9_.:-]+$/;
/** Ids are opaque tokens from the agent's API; nothing legitimate comes near this length. */
const REQUEST_ID_MAX = 256;
const MODEL_MAX = 64;

export type PermissionRequestUpdate = { kind: 'set'; id: string } | { kind: 'unset' } | { kind: 'none' };

/**
 * What happens to @agent_permission_request. A reply clears it unless it provably belongs to a
 * different session or names another request than the stored one (`current`): the reply to
 * request 1 must never clear request 2. A blocked stamp records a well-formed request id;
 * leaving blocked clears it.
 */
export function permissionRequestUpdate(
  kind: string,
  decision: EventDecision,
  payload: string,
  stored: StampedState | null,
  current: string | null = null,
): PermissionRequestUpdate {
  if (kind === 'permission-replied') {
    const owner = stored?.session ?? null;
    const session = eventSession(payload);
    if (owner !== null && session !== null && owner !== session) return { kind: 'none' };
    const answered = topLevel(payload)?.['request_id'];
    return typeof answered === 'string' && answered !== '' && current !== null && answered !== current ? { kind: 'none' } : { kind: 'unset' };
  }
  if (decision.kind !== 'stamp') return { kind: 'none' };
  if (decision.state === 'working' || decision.state === 'idle') return { kind: 'unset' };
  if (decision.state !== 'blocked') return { kind: 'none' };
  const id = topLevel(payload)?.['request_id'];
  if (typeof id !== 'string' || id.length > REQUEST_ID_MAX || !REQUEST_ID.test(id)) return { kind: 'none' };
  return { kind: 'set', id };
}

/** An event time from the payload older than this is not believed (a replayed or stale file). */
const SENT_AT_MAX_AGE_MS = 10 * 60_000;

/**
 * When the agent sent the event: its own `timestamp` (Gemini CLI puts an ISO 8601 instant in
 * every payload) or, without one, `now`. Hook processes start seconds apart under load, so the
 * time a process gets round to reading its payload can put two events in the wrong order; the
 * agent's own instant cannot. A time ahead of `now` or older than ten minutes is not believed.
 */
export function eventSentAt(payload: string, now: number): number {
  const raw = topLevel(payload)?.['timestamp'];
  const at = typeof raw === 'string' && /^\d{4}-\d\d-\d\dT/.test(raw) ? Date.parse(raw) : NaN;
  return Number.isFinite(at) && at <= now && at >= now - SENT_AT_MAX_AGE_MS ? at : now;
}

export interface RegisterExtras {
  model: string | null;
  apiEndpoint: string | null;
}

/**
 * The optional facts a lifecycle start carries. The endpoint is later dialled by `act`, so only a
 * plain local-style `http://` URL with nothing that could smuggle a second token is kept.
 */
export function registerExtras(payload: string): RegisterExtras {
  const obj = topLevel(payload);
  const rawModel = obj?.['model'];
  const model = typeof rawModel === 'string' ? rawModel.trim() : '';
  const modelLength = [...model].length;
  const rawEndpoint = obj?.['api_endpoint'];
  const endpointOk =
    typeof rawEndpoint === 'string' &&
    rawEndpoint.startsWith('http://') &&
    rawEndpoint.length > 'http://'.length &&
    !/\s/.test(rawEndpoint) &&
    !CONTROL.test(rawEndpoint);
  return {
    model: modelLength >= 1 && modelLength <= MODEL_MAX && !CONTROL.test(model) ? model : null,
    apiEndpoint: endpointOk ? rawEndpoint : null,
  };
}
