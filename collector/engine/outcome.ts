// What one poll cycle learns about each pane and returns as a whole; shared by the cycle's steps.

import type { AgentRow } from '../../shared/row.js';
import type { Identity } from '../core/identity.js';
import type { TmuxCommand } from '../core/stamp-render.js';
import type { StampedState } from '../core/types.js';
import type { PaneRecord } from './pane-list.js';

export interface PaneOutcome {
  rec: PaneRecord;
  /** What the store holds after this cycle (null: no stamp). */
  stamp: StampedState | null;
  identity: Identity | null;
  /** How the pane was handled, for doctor and the benchmark. */
  path: 'consumer' | 'reused' | 'captured' | 'registered' | 'removed' | 'ignored' | 'none' | 'dead' | 'quiet';
}

export interface CycleResult {
  now: number;
  rows: AgentRow[];
  panes: PaneOutcome[];
  stampede: boolean;
  produced: boolean;
  /** Output is watched and no pane waits on a look: the next timed cycle may come late. */
  settled: boolean;
}

/** Writes for one pane: they commit together, and are dropped together if the pane died. */
export interface PaneWrites {
  outcome: PaneOutcome;
  cmds: TmuxCommand[];
}
