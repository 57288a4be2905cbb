// When a pane rings (surfaces §4, engine §2.6). Pure: the stored stamp and options in, a decision
// out; the notifier does the marker write and the firing.
//
// One ring per episode: the episode instant is max(@agent_since, @agent_turn_at), so a second
// completion inside one idle run (which moves turn_at, not since) is a new episode. A marker at or
// after the instant means this episode already rang.

import type { HostTrigger } from '../../shared/notify.js';
import { CLOCK_STEP_SKEW_MS, episodeAt } from '../core/store-codec.js';
import type { StampedState } from '../core/types.js';

export type EpisodeTrigger = Exclude<HostTrigger, 'context_high'>;

/** The trigger a stamp stands for, whether or not it is enabled or already rang. */
export function triggerOf(stamp: Pick<StampedState, 'state' | 'attention'>): EpisodeTrigger | null {
  if (stamp.state === 'blocked') return 'blocked';
  if (stamp.state === 'idle' && stamp.attention) return 'done';
  return null;
}

/**
 * The trigger to fire now for this stamp, or null (not enabled, nothing to say, or already rung).
 * A marker more than CLOCK_STEP_SKEW_MS ahead of `now` was written on a clock that has since
 * stepped back (the rule `since` follows): it stands for no ring, else it would silence every
 * episode until the clock caught up with it.
 */
export function dueTrigger(stamp: StampedState, on: readonly string[], now = Date.now()): EpisodeTrigger | null {
  const t = triggerOf(stamp);
  if (t === null || !on.includes(t)) return null;
  const episode = episodeAt(stamp);
  const marker = stamp.notifiedAt !== null && stamp.notifiedAt > now + CLOCK_STEP_SKEW_MS ? null : stamp.notifiedAt;
  if (marker !== null && marker >= episode) return null;
  return t;
}

/**
 * The marker value written before firing: now, but never before the episode instant, so a clock
 * that stepped back still leaves a marker the dedup recognises.
 */
export function markerFor(stamp: StampedState, now: number): number {
  return Math.max(now, episodeAt(stamp));
}

export type ContextStep = 'fire' | 'rearm' | 'hold';

/** Readings this far below the threshold re-arm a fired context_high. */
export const CONTEXT_REARM_GAP = 10;

/**
 * context_high: armed while @agent_context_notified_at is absent. A real reading at or over the
 * threshold fires once and disarms; a reading more than the gap below re-arms. No reading holds.
 */
export function contextStep(pct: number | null, firedMarker: string | undefined, threshold: number): ContextStep {
  if (pct === null || !Number.isFinite(pct)) return 'hold';
  const armed = firedMarker === undefined || firedMarker === '';
  if (armed) return pct >= threshold ? 'fire' : 'hold';
  return pct < threshold - CONTEXT_REARM_GAP ? 'rearm' : 'hold';
}

/**
 * Whether `tma event` rings inline: TMA_NOTIFY_FROM_EVENT, when set, decides alone (`1` on, any
 * other value off, so a person can switch a configured host off for one shell); else
 * `[notify] from_event`.
 */
export function fromEventEnabled(env: NodeJS.ProcessEnv, configured: boolean | undefined): boolean {
  const v = env.TMA_NOTIFY_FROM_EVENT;
  if (v !== undefined) return v === '1';
  return configured === true;
}
