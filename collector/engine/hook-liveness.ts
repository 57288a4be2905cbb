// Hook-liveness demotion: a pane whose agent reports its own state through hooks does not need a
// capture every time its output goes quiet, as long as its hooks are alive. A stored hook claim
// that hooks keep renewing is trusted; output that goes quiet while no hook speaks counts against
// the hooks, and after `demoteEdges` such quiet edges the pane is demoted: every edge is captured
// again and the screen may overwrite the stale hook claim. Any hook event for the pane restores
// the trust. Memory only, bounded; nothing here reads tmux or the clock.
//
// Where this differs from the reference's daemon (telemetry-daemon.md B.6), on purpose:
// - a pane whose stored stamp is not a hook claim is always captured on an edge: with no claim to
//   lean on, skipping would only delay a hookless blocked prompt to the slow sweep;
// - "fresh" counts from the last hook event this engine knows of (a hook frame, or a hook stamp it
//   did not write itself), not from the stored evidence time, which our own corroborating looks
//   renew: otherwise a screen agreeing with a dead hook's claim would keep it fresh for ever;
// - edges of one pane merged into one cycle count once.

import type { StampedState } from '../core/types.js';

/** Quiet edges without a hook event before a hook-capable pane is captured on every edge. */
export const DEMOTE_EDGES = 5;
/** Panes remembered at most; the least recently touched goes first. */
export const LIVENESS_CAP = 4096;

interface Liveness {
  /** Quiet edges since the last hook event that did not find a fresh hook claim. */
  edges: number;
  demoted: boolean;
  /** The latest hook event known for the pane (null: none seen by this engine). */
  hookAt: number | null;
  /** Evidence time of the hook claim this engine last renewed itself (a corroborating look). */
  ownAt: number | null;
}

export interface EdgeInput {
  /** Registered (`@agent_session`) or its manifest's hooks cover some state. */
  hookCapable: boolean;
  prev: StampedState | null;
  now: number;
}

export interface LivenessOptions {
  hookDecayMs: number;
  demoteEdges?: number;
  cap?: number;
}

export class HookLiveness {
  private readonly panes = new Map<string, Liveness>();
  /** Lifetime counts, for doctor and the bench. */
  readonly counts = { skipped: 0, demotions: 0 };

  constructor(private readonly o: LivenessOptions) {}

  private entry(pane: string): Liveness {
    let e = this.panes.get(pane);
    if (e) this.panes.delete(pane);
    else e = { edges: 0, demoted: false, hookAt: null, ownAt: null };
    // Re-inserted last: the map's order is the order panes were last touched.
    this.panes.set(pane, e);
    if (this.panes.size > (this.o.cap ?? LIVENESS_CAP)) this.panes.delete(this.panes.keys().next().value!);
    return e;
  }

  /** A hook event for the pane arrived (at `at`): its hooks are alive. */
  hookEvent(pane: string, at: number): void {
    const e = this.entry(pane);
    e.edges = 0;
    e.demoted = false;
    e.hookAt = Math.max(e.hookAt ?? at, at);
  }

  /** The stamp a cycle read: a hook claim newer than any this engine knows of was a hook event. */
  observe(pane: string, prev: StampedState | null): void {
    if (prev === null || prev.source !== 'hook') return;
    const e = this.panes.get(pane);
    if (e && (prev.evidenceAt === e.ownAt || prev.evidenceAt <= (e.hookAt ?? Number.NEGATIVE_INFINITY))) return;
    this.hookEvent(pane, prev.evidenceAt);
  }

  /** What a look of this engine left stored: a renewed hook claim is its own doing, not a hook's. */
  wrote(pane: string, stored: StampedState | null): void {
    const e = this.panes.get(pane);
    if (e && stored?.source === 'hook' && stored.evidenceAt !== e.hookAt) e.ownAt = stored.evidenceAt;
  }

  /**
   * A quiet edge (the pane painted and went quiet): whether it needs a capture. A fresh hook claim
   * of idle or blocked does not; a hook claim of working with output going quiet does (the agent
   * may be waiting on a prompt its hooks do not report); a stale claim counts the edge and, once
   * demoted, is captured; a pane with no hook claim, or not hook-capable, is always captured.
   */
  edge(pane: string, i: EdgeInput): boolean {
    if (!i.hookCapable) return true;
    const e = this.entry(pane);
    const claim = i.prev !== null && i.prev.source === 'hook' ? i.prev : null;
    const fresh = claim !== null && e.hookAt !== null && i.now - e.hookAt <= this.o.hookDecayMs;
    if (!fresh) {
      e.edges++;
      if (!e.demoted && e.edges >= (this.o.demoteEdges ?? DEMOTE_EDGES)) {
        e.demoted = true;
        this.counts.demotions++;
      }
    }
    const capture = claim === null || claim.state === 'working' || e.demoted;
    if (!capture) this.counts.skipped++;
    return capture;
  }

  demoted(pane: string): boolean {
    return this.panes.get(pane)?.demoted === true;
  }

  /**
   * The prior the fold sees: a demoted pane's stored hook claim is read as a capture claim, so the
   * screen is weighed against it as against any screen claim.
   */
  prior(pane: string, prev: StampedState | null): StampedState | null {
    return prev !== null && prev.source === 'hook' && this.demoted(pane) ? { ...prev, source: 'capture' } : prev;
  }

  /** Panes demoted right now. */
  demotedCount(): number {
    let n = 0;
    for (const e of this.panes.values()) if (e.demoted) n++;
    return n;
  }

  size(): number {
    return this.panes.size;
  }

  keepOnly(panes: ReadonlySet<string>): void {
    for (const p of this.panes.keys()) if (!panes.has(p)) this.panes.delete(p);
  }
}
