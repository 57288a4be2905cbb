// The verdict fold: one pane's prior stamp, process facts and fresh evidence in, one verdict out.
// The branches run in a fixed order and the first that decides wins; the order is the ranking
// (hook > foreground process > freeze > screen slots) and every verdict names why it won.

import type { Evidence, Facts, FoldConfig, StampedState, State, Verdict, Winning } from './types.js';

export interface FoldManifest {
  capture: { visible: State[] };
}

type StateEvidence = Evidence & { claim: { kind: 'state'; state: State; detail: string | null } };

function carriesState(ev: Evidence): ev is StateEvidence {
  return ev.claim.kind === 'state';
}

/** Latest by `at`; on a tie the later entry wins, as the reference's max_by does. */
function newest(evs: readonly StateEvidence[]): StateEvidence | null {
  let best: StateEvidence | null = null;
  for (const ev of evs) if (best === null || ev.at >= best.at) best = ev;
  return best;
}

/** A hook claim the screen may only corroborate, carve out of, or outlast. */
function isProtected(p: StampedState | null): boolean {
  return p !== null && p.source === 'hook' && p.state !== 'unknown';
}

function decayMs(state: State, cfg: FoldConfig): number {
  return state === 'blocked' ? cfg.blockedDecayMs : cfg.hookDecayMs;
}

/** Whether a publish of `next` raises the attention flag, given what was stored before it. */
export function raisesAttention(prevState: State | null, next: State): boolean {
  if (next === 'blocked') return prevState !== 'blocked';
  if (next === 'idle') return prevState === 'working';
  return false;
}

export function fold(prevIn: StampedState | null, facts: Facts, evidence: readonly Evidence[], manifest: FoldManifest, cfg: FoldConfig, now: number): Verdict {
  // A different agent process in the pane is a new episode: nothing the old one claimed applies.
  const episodeReset = prevIn !== null && prevIn.pid !== 0 && facts.pid !== 0 && prevIn.pid !== facts.pid;
  const prev = episodeReset ? null : prevIn;

  const base = { episodeReset, prev };

  const publish = (state: State, detail: string | null, winning: Winning, mayOverride: boolean, reason: string): Verdict => ({
    state,
    detail,
    winning,
    action: 'publish',
    mayOverride,
    setAttention: raisesAttention(prev?.state ?? null, state),
    corroborates: false,
    reason,
    ...base,
  });

  const fromEvidence = (ev: StateEvidence, source: Winning['source']): Winning => ({
    source,
    at: ev.at,
    label: ev.label,
  });

  // A hold echoes the stamp; with nothing stamped there is nothing to echo, so the pane is
  // published as unknown instead (weakest source, overridable by anything).
  const hold = (reason: string, clock = false): Verdict => {
    if (prev === null) {
      return {
        state: 'unknown',
        detail: null,
        winning: { source: 'capture', at: now, label: 'first sight' },
        action: 'publish',
        mayOverride: false,
        setAttention: false,
        corroborates: false,
        reason: `first sight (${reason})`,
        ...base,
      };
    }
    return {
      state: prev.state,
      detail: prev.detail,
      winning: {
        source: prev.source === 'activity' ? 'capture' : prev.source,
        at: prev.evidenceAt,
        label: `stored ${prev.source}`,
      },
      action: 'hold',
      mayOverride: false,
      setAttention: false,
      corroborates: false,
      reason,
      ...(clock ? { waitsOnClock: true as const } : {}),
      ...base,
    };
  };

  // Refreshes a hook claim the screen agrees with: evidence_at moves (restarting decay), the
  // claim stays the hook's, and the flag is left alone.
  const corroborate = (p: StampedState, ev: StateEvidence): Verdict => ({
    state: p.state,
    detail: p.detail,
    winning: { source: 'hook', at: ev.at, label: ev.label },
    action: 'publish',
    mayOverride: false,
    setAttention: false,
    corroborates: true,
    reason: `screen corroborates hook ${p.state}`,
    ...base,
  });

  const claims = evidence.filter(carriesState);

  // P1: the agent said so itself.
  const hook = newest(claims.filter((ev) => ev.provenance === 'hook_event'));
  if (hook !== null) {
    return publish(hook.claim.state, hook.claim.detail, fromEvidence(hook, 'hook'), true, 'fresh hook event');
  }

  // P2: something else owns the terminal, so the screen is not the agent's.
  if (!facts.foregroundIsAgent) {
    if (isProtected(prev) && facts.pid !== 0) return hold('agent alive behind editor/pager');
    return publish('unknown', null, { source: 'process', at: now, label: 'foreground is not the agent' }, true, 'foreground is not the agent');
  }

  // P3: the user is reading history; what is on screen is not the present.
  if (facts.scrolled) return hold('frozen: pane scrolled');
  if (facts.historyView) return hold('frozen: history view');

  // P4: screen and title slots. Hook claims never reach here (P1 took them).
  const screen = claims.filter((ev) => ev.provenance !== 'hook_event');
  const blocker = newest(screen.filter((ev) => ev.claim.state === 'blocked'));
  const working = newest(screen.filter((ev) => ev.claim.state === 'working'));
  const idle = newest(screen.filter((ev) => ev.claim.state === 'idle'));

  if (prev !== null && isProtected(prev)) {
    const p = prev;
    if (blocker !== null) {
      if (p.state === 'blocked') return corroborate(p, blocker);
      if (blocker.at > p.evidenceAt) {
        return publish('blocked', blocker.claim.detail, fromEvidence(blocker, 'capture'), false, 'blocker chrome newer than hook claim');
      }
      return hold('hook claim newer than blocker chrome');
    }
    // Idle chrome co-renders mid-turn for several agents, so working outranks it.
    const c = working ?? idle;
    if (c === null) return hold('no screen evidence; hook claim stands');
    if (c.claim.state === p.state) return corroborate(p, c);
    const age = now - p.evidenceAt;
    const decayed = age > decayMs(p.state, cfg) && manifest.capture.visible.includes(p.state);
    if (!decayed) return hold(`hook ${p.state} not yet decayed`, true);
    if (p.state === 'working' && c.claim.state === 'idle' && age <= cfg.dwellMs) return hold('dwell', true);
    return publish(c.claim.state, c.claim.detail, fromEvidence(c, 'capture'), true, `hook ${p.state} decayed`);
  }

  if (blocker !== null) return publish('blocked', blocker.claim.detail, fromEvidence(blocker, 'capture'), false, 'screen: blocked');
  if (working !== null) return publish('working', working.claim.detail, fromEvidence(working, 'capture'), false, 'screen: working');
  if (idle !== null) {
    if (prev !== null && prev.state === 'working' && now - prev.evidenceAt <= cfg.dwellMs) return hold('dwell', true);
    return publish('idle', idle.claim.detail, fromEvidence(idle, 'capture'), false, 'screen: idle');
  }
  return hold('no evidence');
}
