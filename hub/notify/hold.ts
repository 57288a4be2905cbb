// Why a sink may hold a notification back, decided when its dwell ends: the pane was answered
// meanwhile (it is no longer blocked on the episode the notification is about), someone is looking
// at that pane (the host saw a client on it typing, or the fleet page has that row in focus), or
// the same pane already rang this sink within its cooldown. Pure, given what the store says now.

import type { HubNotification } from './journal.js';
import type { NotifySinkConfig } from './sink-config.js';

/** What the hub knows about a pane right now (the store's row), and whether the page is on it. */
export interface NotifyFleetView {
  pane(host: string, server: string, pane: string): { state: string; episode_ms: number; prompt_id: string | null } | null;
  pageLooking(host: string, server: string, pane: string): boolean;
}

export type SkipReason = 'answered' | 'looking' | 'cooldown' | 'unsent';
export const SKIP_REASONS: readonly SkipReason[] = ['answered', 'looking', 'cooldown', 'unsent'];

/** How long after it was accepted a notification waits before `sink` may take it. */
export function dwellLeft(sink: Pick<NotifySinkConfig, 'dwellMs'>, n: Pick<HubNotification, 'trigger' | 'received_ms'>, now: number): number {
  const dwell = sink.dwellMs ?? 0;
  if (n.trigger !== 'blocked' || dwell <= 0) return 0;
  return Math.max(0, n.received_ms + dwell - now);
}

/**
 * Whether `sink` skips `n` now, and why; null sends it. `lastRung` is the last episode of that
 * pane this sink took (and when), which the caller updates when this returns null.
 */
export function skipReason(
  sink: Pick<NotifySinkConfig, 'dwellMs' | 'whenLooking' | 'cooldownMs'>,
  n: HubNotification & { looking?: boolean | null },
  view: NotifyFleetView | null,
  lastRung: { episode_ms: number; at: number } | undefined,
  now: number,
): SkipReason | null {
  if (n.trigger === 'resolved') return null;
  if (n.trigger === 'blocked' && (sink.dwellMs ?? 0) > 0) {
    const row = view?.pane(n.host, n.server, n.pane) ?? null;
    if (!row || row.state !== 'blocked' || row.episode_ms !== n.episode_ms) return 'answered';
  }
  if (sink.whenLooking !== 'send' && (n.looking === true || view?.pageLooking(n.host, n.server, n.pane) === true)) return 'looking';
  const cooldown = sink.cooldownMs ?? 0;
  if (cooldown > 0 && lastRung && lastRung.episode_ms !== n.episode_ms && now - lastRung.at >= 0 && now - lastRung.at < cooldown) return 'cooldown';
  return null;
}

/** The /metrics lines of what each sink held back, by reason (sink names already escaped). */
export function skippedLines(sinks: [string, Record<SkipReason, number>][]): string[] {
  const out = [
    '# HELP tma_hub_notify_skipped_total Notifications held back on purpose (answered within the dwell, looking, cooldown), per sink.',
    '# TYPE tma_hub_notify_skipped_total counter',
  ];
  for (const [s, c] of sinks) for (const r of SKIP_REASONS) out.push(`tma_hub_notify_skipped_total{sink="${s}",reason="${r}"} ${c[r]}`);
  return out;
}
