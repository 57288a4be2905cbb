// `tma event`'s inline ring (`[notify] from_event`): after the hook's stamp committed, the pane is
// read back and goes through the same steps as the collector's notifier: the trigger and dedup of
// trigger.ts, the marker write of host-notifier.ts (a failed write means no ring), the mute check,
// and the host sinks. Because the marker is written before any sound, a collector that later
// sees this episode finds it already rung.

import type { NotifySettings } from '../config/config-types.js';
import { decodeStamp, episodeAt } from '../core/store-codec.js';
import { LIST_PANES_FORMAT, parsePaneList } from '../engine/pane-list.js';
import { rowOf } from '../engine/rows.js';
import type { TmuxRunner } from '../tmux/runner.js';
import { writeEpisodeMarker } from './host-notifier.js';
import type { HostSinks } from './host-sinks.js';
import { dueTrigger, markerFor, type EpisodeTrigger } from './trigger.js';

export interface EventFireInput {
  runner: TmuxRunner;
  pane: string;
  agent: string;
  settings: NotifySettings & { on: readonly string[] };
  sinks: Pick<HostSinks, 'fire'>;
  server: string;
  host: string;
  now: number;
}

export type EventFireOutcome = 'fired' | 'muted' | 'not-due' | 'marker-lost' | 'no-pane';

export async function fireFromEvent(i: EventFireInput): Promise<{ outcome: EventFireOutcome; trigger: EpisodeTrigger | null }> {
  // Read what actually stands: the stamp may have lost its arbitration, or kept an older since.
  const out = await i.runner.run(['list-panes', '-t', i.pane, '-F', LIST_PANES_FORMAT], { timeoutMs: 3000 });
  const rec = parsePaneList(out).find((p) => p.paneId === i.pane);
  const d = rec ? decodeStamp(rec.options) : null;
  if (!rec || !d || !d.ok || !d.stamp) return { outcome: 'no-pane', trigger: null };
  const stamp = d.stamp;
  const trigger = dueTrigger(stamp, i.settings.on, i.now);
  if (trigger === null) return { outcome: 'not-due', trigger: null };
  if (!(await writeEpisodeMarker(i.runner, i.pane, markerFor(stamp, i.now)))) return { outcome: 'marker-lost', trigger };
  const row = rowOf(rec, stamp, i.agent, { server: i.server, host: i.host, now: i.now });
  // Muted: the ring is spent (the marker stands), so neither unmuting nor a collector rings it.
  if (row.muted) return { outcome: 'muted', trigger };
  await i.sinks.fire({ trigger, row, episodeMs: episodeAt(stamp), at: Date.now() }, i.runner);
  return { outcome: 'fired', trigger };
}
