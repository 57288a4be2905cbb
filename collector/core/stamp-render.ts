// The only place that turns stamp plans into tmux argv. Every value travels as its own argv
// element (no shell), and a pane's whole plan goes out as one tmux invocation so the tuple
// commits (or holds) together with @agent_stamped_at landing last.

import { CLOCK_STEP_SKEW_MS, HOOK_ORDER_WINDOW_MS, KEY, REMOVAL_SET, writableDetail } from './store-codec.js';
import { keepsStoredSince, tupleWriteOrder, type TupleField } from './stamp-plan.js';
import type { Guard, HoldPlan, PublishPlan, StampPlan, StampedState } from './types.js';

/** One tmux command's argv, without the binary and global flags. */
export type TmuxCommand = string[];

/** Flatten commands into one argv, separated by tmux's own `;` command separator. */
export function chain(cmds: readonly TmuxCommand[]): string[] {
  const out: string[] = [];
  cmds.forEach((cmd, i) => {
    if (i > 0) out.push(';');
    out.push(...cmd);
  });
  return out;
}

/** Format that expands truthy when the stored tuple must be kept instead of the new one. */
export function suppressExpr(guard: Guard): string {
  switch (guard.kind) {
    case 'unconditional':
      return '0';
    case 'protect_hook':
      return '#{==:#{@agent_source},hook}';
    case 'carve_out':
      return `#{&&:#{==:#{@agent_source},hook},#{e|<=:${guard.captureAt},#{@agent_evidence_at}}}`;
    case 'refresh_claim':
      return `#{?#{==:#{@agent_state},${guard.state}},0,1}`;
    case 'hook_arbitrate':
      // Only another hook event orders a hook event, never evidence_at (a screen corroboration
      // moves that). A stored time a minute ahead is a clock stepped back: it holds nothing.
      return `#{&&:#{e|<:${guard.sentAt},#{${KEY.hookAt}}},#{e|<=:#{${KEY.hookAt}},${guard.sentAt + HOOK_ORDER_WINDOW_MS}}}`;
    case 'overrule_claim':
      // Written in the default order (source before evidence), so once source reads capture the
      // rest of the chain is no longer held back by the claim it just replaced.
      return `#{&&:#{==:#{@agent_source},hook},#{e|<:${guard.claimAt},#{@agent_evidence_at}}}`;
  }
}

/**
 * Make free text literal inside a conditional branch: `#`, `,` and `}` would otherwise open a
 * format, split the branch or close it early. Tokens and numbers pass through unchanged.
 */
export function escapeFormatText(value: string): string {
  return value.replace(/[#,}]/g, (c) => `#${c}`);
}

function setPlain(pane: string, key: string, value: string): TmuxCommand {
  return ['set-option', '-p', '-t', pane, key, value];
}

function unset(pane: string, key: string): TmuxCommand {
  return ['set-option', '-p', '-u', '-t', pane, key];
}

function setGuarded(pane: string, key: string, s: string, value: string): TmuxCommand {
  return ['set-option', '-p', '-F', '-t', pane, key, `#{?${s},#{${key}},${value}}`];
}

/** Identity and freshness: written whatever the guard decides, stamped_at always last. */
function trailer(pane: string, plan: Pick<PublishPlan, 'hash' | 'pid' | 'name' | 'stampedAt'>): TmuxCommand[] {
  const cmds: TmuxCommand[] = [];
  if (plan.hash !== null) cmds.push(setPlain(pane, KEY.hash, plan.hash.toString()));
  cmds.push(setPlain(pane, KEY.pid, String(plan.pid)));
  if (plan.name !== '') cmds.push(setPlain(pane, KEY.name, plan.name));
  cmds.push(setPlain(pane, KEY.stampedAt, String(plan.stampedAt)));
  return cmds;
}

/** A new agent process: nothing of the old episode may survive, so every write is plain. */
function renderEpisodeReset(pane: string, plan: PublishPlan): TmuxCommand[] {
  const detail = writableDetail(plan.detail);
  return [
    setPlain(pane, KEY.since, String(plan.since)),
    setPlain(pane, KEY.state, plan.state),
    detail === '' ? unset(pane, KEY.detail) : setPlain(pane, KEY.detail, detail),
    setPlain(pane, KEY.source, plan.source),
    setPlain(pane, KEY.evidenceAt, String(plan.evidenceAt)),
    plan.setAttention ? setPlain(pane, KEY.attention, '1') : unset(pane, KEY.attention),
    unset(pane, KEY.notifiedAt),
    unset(pane, KEY.turnAt),
    ...trailer(pane, plan),
  ];
}

function renderGuarded(pane: string, plan: PublishPlan): TmuxCommand[] {
  const s = suppressExpr(plan.guard);
  // since goes first so its write-once test still sees the state being replaced.
  const keepSince = `#{&&:#{==:#{@agent_state},${plan.state}},` + `#{e|<=:#{@agent_since},${plan.stampedAt + CLOCK_STEP_SKEW_MS}}}`;
  const since = `#{?${keepSince},#{@agent_since},${plan.since}}`;
  const value: Record<TupleField, [string, string]> = {
    since: [KEY.since, since],
    state: [KEY.state, plan.state],
    detail: [KEY.detail, writableDetail(plan.detail)],
    source: [KEY.source, plan.source],
    evidenceAt: [KEY.evidenceAt, String(plan.evidenceAt)],
  };
  const cmds = tupleWriteOrder(plan.guard).map((f) => setGuarded(pane, value[f][0], s, value[f][1]));
  if (plan.guard.kind === 'hook_arbitrate') cmds.push(setGuarded(pane, KEY.hookAt, s, String(plan.guard.sentAt)));
  if (plan.setAttention) cmds.push(setGuarded(pane, KEY.attention, s, '1'));
  return [...cmds, ...trailer(pane, plan)];
}

/**
 * Without `-F` support nothing can be decided server-side, so the writer decides from what it
 * read: the same order, write-once since from `prev`, and attention only ever raised.
 */
function renderAdvisory(pane: string, plan: PublishPlan, prev: StampedState | null): TmuxCommand[] {
  const detail = writableDetail(plan.detail);
  const since = keepsStoredSince(prev, plan) ? prev.since : plan.since;
  const cmds: TmuxCommand[] = [
    setPlain(pane, KEY.since, String(since)),
    setPlain(pane, KEY.state, plan.state),
    detail === '' ? unset(pane, KEY.detail) : setPlain(pane, KEY.detail, detail),
    setPlain(pane, KEY.source, plan.source),
    setPlain(pane, KEY.evidenceAt, String(plan.evidenceAt)),
  ];
  if (plan.guard.kind === 'hook_arbitrate') cmds.push(setPlain(pane, KEY.hookAt, String(plan.guard.sentAt)));
  if (plan.setAttention) cmds.push(setPlain(pane, KEY.attention, '1'));
  return [...cmds, ...trailer(pane, plan)];
}

export interface PublishRenderOptions {
  /** Whether the server expands `set-option -F` (the cached probe answer). */
  guarded: boolean;
  /** The stamp as read this cycle; only the advisory writer consults it. */
  prev: StampedState | null;
}

export function renderPublish(pane: string, plan: PublishPlan, opts: PublishRenderOptions): TmuxCommand[] {
  if (plan.episodeReset) return renderEpisodeReset(pane, plan);
  return opts.guarded ? renderGuarded(pane, plan) : renderAdvisory(pane, plan, opts.prev);
}

/** A hold only proves the pane was looked at; touching state or evidence_at would reset dwell. */
export function renderHold(pane: string, plan: HoldPlan): TmuxCommand[] {
  const cmds: TmuxCommand[] = [];
  if (plan.hash !== null) cmds.push(setPlain(pane, KEY.hash, plan.hash.toString()));
  cmds.push(setPlain(pane, KEY.stampedAt, String(plan.stampedAt)));
  return cmds;
}

export function renderRemove(pane: string): TmuxCommand[] {
  return REMOVAL_SET.map((key) => unset(pane, key));
}

export function renderPlan(pane: string, plan: StampPlan, opts: PublishRenderOptions): TmuxCommand[] {
  switch (plan.kind) {
    case 'publish':
      return renderPublish(pane, plan, opts);
    case 'hold':
      return renderHold(pane, plan);
    case 'remove':
      return renderRemove(pane);
  }
}

function renderRollup(pane: string, scope: string[], key: string, value: string, guard?: Guard): TmuxCommand {
  // An empty rollup means no agent in scope: the option goes, it is never stored empty.
  if (value === '') return ['set-option', ...scope, '-u', '-t', pane, key];
  if (guard === undefined) return ['set-option', ...scope, '-t', pane, key, value];
  const s = suppressExpr(guard);
  return ['set-option', ...scope, '-F', '-t', pane, key, `#{?${s},#{${key}},${escapeFormatText(value)}}`];
}

/** Window rollup then session rollup, both addressed through the pane. */
export function renderRollups(pane: string, windowSummary: string, sessionSummary: string, guard?: Guard): TmuxCommand[] {
  return [renderRollup(pane, ['-w'], KEY.windowSummary, windowSummary, guard), renderRollup(pane, [], KEY.sessionSummary, sessionSummary, guard)];
}

/** A hook-path option that must commit or hold together with the tuple it rides with. */
export function renderHookCompanion(pane: string, key: string, value: string, guard: Guard): TmuxCommand {
  return setGuarded(pane, key, suppressExpr(guard), escapeFormatText(value));
}

/** A format that can only expand to `ok`; a tmux that stores formats literally keeps the text. */
export const PROBE_FORMAT = '#{?#{==:1,1},ok,no}';

export function renderSetpfProbe(pane: string): TmuxCommand {
  return ['set-option', '-p', '-F', '-t', pane, KEY.probe, PROBE_FORMAT];
}

export function renderProbeRead(pane: string): TmuxCommand {
  return ['display-message', '-p', '-t', pane, `#{${KEY.probe}}`];
}

export function renderProbeUnset(pane: string): TmuxCommand {
  return unset(pane, KEY.probe);
}

/** What a successful probe reads back. */
export function probeSupported(readBack: string): boolean {
  return readBack.trim() === 'ok';
}

// ---------------------------------------------------------------------------------------------
// The action lock (@agent_action). Both writes decide server-side, so two brokers racing on one
// pane cannot both see it free: only the read-back of the acquire tells who won.

export const LOCK_KEY = '@agent_action';

const LOCK_NONCE = /^[0-9a-f]{32}$/;

function lockNonce(nonce: string): string {
  // The nonce becomes an fnmatch pattern; anything but hex could widen what it matches.
  if (!LOCK_NONCE.test(nonce)) throw new Error(`not a lock nonce: ${JSON.stringify(nonce)}`);
  return nonce;
}

/**
 * Take the lock if it is free: empty, or its leading digits (the expiry) below `now`. The
 * pattern `[^0-9].*` strips from the first non-digit; a `:` would end the modifier in tmux 3.3.
 */
export function renderLockAcquire(pane: string, value: string, now: number): TmuxCommand {
  const free = `#{||:#{==:#{${LOCK_KEY}},},#{e|<:#{s/[^0-9].*//:${LOCK_KEY}},${Math.trunc(now)}}}`;
  return ['set-option', '-p', '-F', '-t', pane, LOCK_KEY, `#{?${free},${escapeFormatText(value)},#{${LOCK_KEY}}}`];
}

/** What the acquire left behind, read back in the same chain. */
export function renderLockRead(pane: string): TmuxCommand {
  return ['display-message', '-p', '-t', pane, `#{${LOCK_KEY}}`];
}

/** Empty the lock only if it still carries our nonce; someone else's lock is left alone. */
export function renderLockRelease(pane: string, nonce: string): TmuxCommand {
  return ['set-option', '-p', '-F', '-t', pane, LOCK_KEY, `#{?#{m:*:${lockNonce(nonce)}:*,#{${LOCK_KEY}}},,#{${LOCK_KEY}}}`];
}

/** Hand the lock over (a supervisor taking it with its own pid and deadline), nonce kept. */
export function renderLockRewrite(pane: string, nonce: string, value: string): TmuxCommand {
  return ['set-option', '-p', '-F', '-t', pane, LOCK_KEY, `#{?#{m:*:${lockNonce(nonce)}:*,#{${LOCK_KEY}}},${escapeFormatText(value)},#{${LOCK_KEY}}}`];
}

// ---------------------------------------------------------------------------------------------
// The context gauge. Its own marker (@agent_context_at, written last) orders readings: a reading
// older than the stored one holds every value, equal or newer replaces them, so a duplicate
// arriving late cannot bring back a value a newer reading cleared.

export interface ContextWrite {
  /** Percent 0..100; null clears the gauge. */
  pct: number | null;
  /** Token footprint; null clears the count. */
  tokens: number | null;
  /** The reading's evidence time (ms). */
  at: number;
}

export function renderContextChain(pane: string, w: ContextWrite, opts: { guarded: boolean; storedAt: number | null }): TmuxCommand[] {
  const at = String(Math.trunc(w.at));
  const pct = w.pct === null ? '' : String(Math.trunc(w.pct));
  const tokens = w.tokens === null ? '' : String(Math.trunc(w.tokens));
  if (opts.guarded) {
    const s = `#{e|>:#{${KEY.contextAt}},${at}}`;
    return [
      setGuarded(pane, KEY.contextPct, s, pct),
      setGuarded(pane, KEY.tokens, s, tokens),
      setGuarded(pane, KEY.tokensAt, s, tokens === '' ? '' : at),
      setGuarded(pane, KEY.contextAt, s, at),
    ];
  }
  if (w.at < (opts.storedAt ?? 0)) return [];
  return [
    pct === '' ? unset(pane, KEY.contextPct) : setPlain(pane, KEY.contextPct, pct),
    ...(tokens === '' ? [unset(pane, KEY.tokens), unset(pane, KEY.tokensAt)] : [setPlain(pane, KEY.tokens, tokens), setPlain(pane, KEY.tokensAt, at)]),
    setPlain(pane, KEY.contextAt, at),
  ];
}

export const QUOTA_KEYS = {
  pct: '@agent_quota_pct',
  window: '@agent_quota_window',
  resetsAt: '@agent_quota_resets_at',
  at: '@agent_quota_at',
  costUsd: '@agent_cost_usd',
} as const;

export interface UsageWrite {
  costUsd: number | null;
  quota: { pct: number; window: string; resetsAt: number | null } | null;
  at: number;
}

/**
 * Cost and quota ride one chain under their own marker (@agent_quota_at, last), ordered like the
 * context gauge. Only what the payload carried is written: absence is never written as 0.
 */
export function renderUsageChain(pane: string, w: UsageWrite, opts: { guarded: boolean; storedAt: number | null }): TmuxCommand[] {
  const values: [string, string][] = [];
  if (w.quota !== null) {
    values.push([QUOTA_KEYS.pct, String(w.quota.pct)], [QUOTA_KEYS.window, escapeFormatText(w.quota.window)]);
    if (w.quota.resetsAt !== null) values.push([QUOTA_KEYS.resetsAt, String(w.quota.resetsAt)]);
  }
  if (w.costUsd !== null) values.push([QUOTA_KEYS.costUsd, String(w.costUsd)]);
  if (!values.length) return [];
  const at = String(Math.trunc(w.at));
  values.push([QUOTA_KEYS.at, at]);
  if (opts.guarded) {
    const s = `#{e|>:#{${QUOTA_KEYS.at}},${at}}`;
    return values.map(([k, v]) => setGuarded(pane, k, s, v));
  }
  if (w.at < (opts.storedAt ?? 0)) return [];
  return values.map(([k, v]) => setPlain(pane, k, v));
}
