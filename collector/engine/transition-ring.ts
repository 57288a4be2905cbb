// The last state changes of a server's panes, kept in a long-lived collector's memory for
// `tma debug transitions`: which pane went from what to what, when (its `@agent_since`) and on
// whose word (`@agent_source`). Pane ids, states, times and sources only: no title or screen text.

import type { Source, State } from '../core/types.js';

/** Records kept; the oldest goes first. */
export const TRANSITION_CAP = 256;

export interface Transition {
  pane: string;
  /** null: the first state this collector saw for the pane (at start, or when it came back). */
  from: State | null;
  to: State;
  /** Epoch ms the new state began (`@agent_since`). */
  at: number;
  source: Source;
}

export interface TransitionsDocument {
  schema: 1;
  cap: number;
  /** Transitions recorded since the collector started, including those no longer kept. */
  recorded: number;
  /** Oldest first. */
  transitions: Transition[];
}

/** One pane as a cycle left it: its stamped state, or null when it has none (any more). */
export interface PaneState {
  pane: string;
  stamp: { state: State; since: number; source: Source } | null;
}

export class TransitionRing {
  private readonly ring: Transition[] = [];
  private start = 0;
  private recorded = 0;
  /** The last state seen per stamped pane; a pane without a stamp is forgotten and starts over. */
  private readonly last = new Map<string, State>();

  constructor(private readonly cap = TRANSITION_CAP) {}

  /** Every pane a cycle listed: a stamped state that differs from the last one seen is recorded. */
  observe(panes: readonly PaneState[]): void {
    const present = new Set<string>();
    for (const { pane, stamp } of panes) {
      if (stamp === null) continue;
      present.add(pane);
      const from = this.last.get(pane) ?? null;
      if (from === stamp.state) continue;
      this.last.set(pane, stamp.state);
      this.push({ pane, from, to: stamp.state, at: stamp.since, source: stamp.source });
    }
    for (const p of this.last.keys()) if (!present.has(p)) this.last.delete(p);
  }

  private push(t: Transition): void {
    this.recorded++;
    if (this.ring.length < this.cap) {
      this.ring.push(t);
      return;
    }
    this.ring[this.start] = t;
    this.start = (this.start + 1) % this.cap;
  }

  document(): TransitionsDocument {
    const transitions = [...this.ring.slice(this.start), ...this.ring.slice(0, this.start)].map((t) => ({ ...t }));
    return { schema: 1, cap: this.cap, recorded: this.recorded, transitions };
  }
}
