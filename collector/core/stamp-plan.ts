// From a verdict to the writes it implies, and from those writes to what the store will hold.
// The projection exists because rows must show the store's truth: a guarded write the server
// suppresses must not appear in a row as if it had landed.

import { CLOCK_STEP_SKEW_MS, HOOK_ORDER_WINDOW_MS, isClockStepped, isInProgress, writableDetail } from './store-codec.js';
import type { Guard, HoldPlan, PublishPlan, Source, StampPlan, StampedState, State, Verdict } from './types.js';

export interface PlanContext {
  pid: number;
  name: string;
  /** fnv1a64 of this cycle's capture; null when nothing was captured (hook path). */
  hash: bigint | null;
  now: number;
}

/**
 * Which stored claims this publish must not overwrite. A verdict allowed to override, or a new
 * episode, writes through; a screen refresh of a hook claim only lands if the claim still stands;
 * blocker chrome beats a hook claim only when it is newer; any other screen read yields to hooks.
 */
export function guardFor(v: Verdict): Guard {
  if (v.episodeReset || v.mayOverride) return { kind: 'unconditional' };
  if (v.winning.source === 'hook') return { kind: 'refresh_claim', state: v.state };
  if (v.state === 'blocked') return { kind: 'carve_out', captureAt: v.winning.at };
  return { kind: 'protect_hook' };
}

export function planFromVerdict(v: Verdict, ctx: PlanContext): PublishPlan | HoldPlan {
  if (v.action === 'hold') return { kind: 'hold', stampedAt: ctx.now, hash: ctx.hash };
  return {
    kind: 'publish',
    state: v.state,
    detail: v.detail,
    source: v.winning.source,
    evidenceAt: v.winning.at,
    since: v.winning.at,
    stampedAt: ctx.now,
    hash: ctx.hash,
    pid: ctx.pid,
    name: ctx.name,
    setAttention: v.setAttention,
    episodeReset: v.episodeReset,
    guard: guardFor(v),
  };
}

/** The three stored fields a suppress expression reads; null state/source = option absent. */
export interface GuardView {
  state: State | null;
  source: Source | null;
  evidenceAt: number;
  /** @agent_hook_at, when the last hook event that stamped the pane was sent (0: none). */
  hookAt?: number;
}

/** Client-side twin of the server-side suppress expression: true = the stored value stays. */
export function guardSuppresses(guard: Guard, store: GuardView | null): boolean {
  const source = store?.source ?? null;
  const evidenceAt = store?.evidenceAt ?? 0;
  switch (guard.kind) {
    case 'unconditional':
      return false;
    case 'protect_hook':
      return source === 'hook';
    case 'carve_out':
      return source === 'hook' && guard.captureAt <= evidenceAt;
    case 'refresh_claim':
      // Refreshing a claim that is gone (or was never there) would resurrect it.
      return (store?.state ?? null) !== guard.state;
    case 'hook_arbitrate': {
      const hookAt = store?.hookAt ?? 0;
      return guard.sentAt < hookAt && hookAt <= guard.sentAt + HOOK_ORDER_WINDOW_MS;
    }
    case 'overrule_claim':
      return source === 'hook' && guard.claimAt < evidenceAt;
  }
}

/**
 * Write-once since: the stored since survives while the state run continues, unless it sits
 * further ahead of the new stamp than a chain could take to commit (a backward clock step).
 * The advisory writer uses it; the guarded format encodes the same test server-side.
 */
export function keepsStoredSince(prev: StampedState | null, plan: PublishPlan): prev is StampedState {
  return prev !== null && !plan.episodeReset && prev.state === plan.state && prev.since <= plan.stampedAt + CLOCK_STEP_SKEW_MS;
}

export interface ProjectOptions {
  /** false when the server cannot expand `set-option -F` and writes degrade to advisory. */
  guarded?: boolean;
  /** The stored @agent_hook_at (a hook plan's guard reads it); absent: none. */
  hookAt?: number;
}

/** The tuple fields a publish chain writes, as the store holds them between commands. */
interface ChainStore extends GuardView {
  detail: string | null;
  since: number;
  attention: boolean;
}

export type TupleField = 'since' | 'state' | 'detail' | 'source' | 'evidenceAt';

/**
 * The order a guarded publish writes the tuple in. tmux re-expands the suppress expression for
 * every command of the chain against the store as the earlier commands left it, so the order is
 * part of the guard's meaning. since goes first (its write-once test must see the old state).
 * A hook stamp's guard reads only @agent_hook_at, written right after the tuple, so its chain
 * lands or holds whole; it keeps writing evidence_at before source, as it did when its guard
 * read those two.
 */
export function tupleWriteOrder(guard: Guard): TupleField[] {
  return guard.kind === 'hook_arbitrate' ? ['since', 'state', 'detail', 'evidenceAt', 'source'] : ['since', 'state', 'detail', 'source', 'evidenceAt'];
}

/**
 * What the pane's options will decode to once `plan` has been applied on top of `prev`.
 *
 * A guarded chain is replayed command by command, in the order it is written, because tmux
 * expands each command's suppress expression against the store as the earlier commands left it.
 */
export function projectStamp(prev: StampedState | null, plan: StampPlan, opts: ProjectOptions = {}): StampedState | null {
  if (plan.kind === 'remove') return null;
  if (plan.kind === 'hold') {
    if (prev === null) return null;
    return { ...prev, stampedAt: plan.stampedAt, hash: plan.hash ?? prev.hash };
  }

  const guarded = (opts.guarded ?? true) && !plan.episodeReset;
  const kept = plan.episodeReset ? null : prev;
  const store: ChainStore = {
    state: prev?.state ?? null,
    source: prev?.source ?? null,
    evidenceAt: prev?.evidenceAt ?? 0,
    detail: prev?.detail ?? null,
    since: prev?.since ?? 0,
    attention: kept?.attention ?? false,
    hookAt: opts.hookAt ?? 0,
  };
  const writes = (): boolean => !guarded || !guardSuppresses(plan.guard, store);
  const detail = writableDetail(plan.detail);

  for (const field of tupleWriteOrder(plan.guard)) {
    if (!writes()) continue;
    if (field === 'since') {
      const sameRun = !plan.episodeReset && store.state === plan.state && store.since <= plan.stampedAt + CLOCK_STEP_SKEW_MS;
      store.since = sameRun ? store.since : plan.since;
    } else if (field === 'state') store.state = plan.state;
    else if (field === 'detail') store.detail = detail === '' ? null : detail;
    else if (field === 'source') store.source = plan.source;
    else store.evidenceAt = plan.evidenceAt;
  }
  if (plan.setAttention && writes()) store.attention = true;

  // Suppressed writes against absent options store empty, so there may still be no state.
  if (store.state === null) return null;
  return {
    state: store.state,
    detail: store.detail,
    source: store.source ?? 'capture',
    evidenceAt: store.evidenceAt,
    since: store.since,
    stampedAt: plan.stampedAt,
    attention: store.attention,
    notifiedAt: kept?.notifiedAt ?? null,
    turnAt: kept?.turnAt ?? 0,
    hash: plan.hash ?? prev?.hash ?? null,
    pid: plan.pid,
    session: prev?.session ?? null,
    subagents: prev?.subagents ?? [],
  };
}

export interface NoChangeOptions {
  now: number;
  /** The name the plan's chain would write, and the one stored (`@agent_name`). */
  name: string;
  storedName: string | null;
  /**
   * A hook claim the screen corroborates is renewed (its evidence time moved, restarting decay)
   * once its stored evidence is this old; younger, the corroboration alone is not written.
   */
  renewHookMs: number;
}

/**
 * Whether writing `next` over `prev` would change nothing a reader uses: every stored field the
 * same but the stamp time and a capture's evidence time. Such a chain is not sent; the caller's
 * own freshness record (and the per-server heartbeat, `@tma_collector_at`) says the stamp is
 * current. A stamp left half-written, from the future, or over a clock step is always rewritten.
 */
export function changesNothing(prev: StampedState | null, next: StampedState | null, o: NoChangeOptions): boolean {
  if (prev === null || next === null) return false;
  if (isInProgress(prev) || isClockStepped(prev) || prev.stampedAt > o.now) return false;
  if (o.name !== '' && o.name !== o.storedName) return false;
  if (
    prev.state !== next.state ||
    prev.detail !== next.detail ||
    prev.source !== next.source ||
    prev.since !== next.since ||
    prev.attention !== next.attention ||
    prev.notifiedAt !== next.notifiedAt ||
    prev.turnAt !== next.turnAt ||
    prev.hash !== next.hash ||
    prev.pid !== next.pid ||
    prev.session !== next.session ||
    prev.subagents.join('\u0000') !== next.subagents.join('\u0000')
  ) {
    return false;
  }
  // Hook claims decay by their evidence time; a capture's evidence time is read by nothing but
  // the working→idle dwell, which a screen that has not moved since cannot need.
  if (next.source === 'hook' && next.evidenceAt !== prev.evidenceAt && o.now - prev.evidenceAt >= o.renewHookMs) return false;
  return true;
}
