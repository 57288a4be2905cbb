// The window and session rollups (@agent_summary, @agent_session_summary) as this cycle's stamps
// make them, compared with what the listing showed stored: only the ones that drifted are written.

import { summaryOf } from '../core/rollup.js';
import { renderRollups, type TmuxCommand } from '../core/stamp-render.js';
import type { State } from '../core/types.js';
import type { PaneOutcome } from './outcome.js';

/** Recompute every window and session rollup from this cycle; the writes where it drifted. */
export function rollupDrift(outcomes: readonly PaneOutcome[]): TmuxCommand[] {
  type Scope = { pane: string; states: State[]; stored: string };
  const windows = new Map<string, Scope>();
  const sessions = new Map<string, Scope>();
  const scope = (m: Map<string, Scope>, key: string, o: PaneOutcome, stored: string): Scope => {
    let sc = m.get(key);
    if (!sc) m.set(key, (sc = { pane: o.rec.paneId, states: [], stored }));
    return sc;
  };
  for (const o of outcomes) {
    if (o.path === 'dead') continue;
    const w = scope(windows, `${o.rec.sessionName}\u0000${o.rec.windowIndex}`, o, o.rec.windowSummary);
    const s = scope(sessions, o.rec.sessionName, o, o.rec.sessionSummary);
    if (o.stamp) {
      w.states.push(o.stamp.state);
      s.states.push(o.stamp.state);
    }
  }
  const cmds: TmuxCommand[] = [];
  for (const w of windows.values()) {
    const v = summaryOf(w.states);
    if (v !== w.stored) cmds.push(renderRollups(w.pane, v, '')[0]!);
  }
  for (const s of sessions.values()) {
    const v = summaryOf(s.states);
    if (v !== s.stored) cmds.push(renderRollups(s.pane, '', v)[1]!);
  }
  return cmds;
}
