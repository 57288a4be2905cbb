// What a cycle does with one listed pane before any screen is read: leave it, settle it from the
// listing and the process table alone, or capture and fold it. A pure function of what the cycle
// knows (the listing, the stamp, what the engine remembers, the clock passed in), so every branch
// is tested from data (test/unit/triage.test.ts) and the engine only carries the decision out.

import { identify, isIgnored, reaperDecision, type Identity } from '../core/identity.js';
import { subtree, type ProcEntry } from '../core/proc.js';
import { canReuseStamp } from '../core/reuse.js';
import { renderPlan, type TmuxCommand } from '../core/stamp-render.js';
import { KEY } from '../core/store-codec.js';
import type { AgentManifest, FoldConfig, StampedState } from '../core/types.js';
import { NOT_AGENT_SWEEP_MS } from './look-book.js';
import type { PaneOutcome } from './outcome.js';
import type { PaneRecord } from './pane-list.js';
import { stampStands } from './settled-read.js';

export type AgentIdentity = Extract<Identity, { kind: 'agent' }>;

export interface TriageInput {
  rec: PaneRecord;
  /** The pane's stamp as decoded from its options (null: none, or one that cannot be read). */
  prev: StampedState | null;
  /** The broker's re-check: capture and fold this pane whatever its stamp's age. */
  forced: boolean;
  /** It painted since its last look, and the edge needs a look (see hook-liveness.ts). */
  repaint: boolean;
  /** A watched engine's memory says its screen cannot have changed (see look-book.ts). */
  quiet: boolean;
  /** When tmux answered the listing, and whether a collector's heartbeat vouched for the stamps then. */
  readAt: number;
  vouched: boolean;
  /** Another reader already polled in this second: a stamped pane is left to it. */
  stampede: boolean;
  /** The processes under the pane roots; null while not read (a pane that needs them says so). */
  procs: readonly ProcEntry[] | null;
  manifests: readonly AgentManifest[];
  fold: FoldConfig;
  /**
   * A long-lived collector watches the pane's output itself; a one-shot reader has only the
   * window's activity second to tell whether the pane painted after its stamp.
   */
  watching: boolean;
  now: number;
}

export type Triage =
  /** No look and no write: the stamp stands (`consumer`) or the screen is still (`quiet`). */
  | { kind: 'keep'; path: 'consumer' | 'quiet' }
  /** The process table decides: ask again with `procs` read. */
  | { kind: 'walk' }
  /**
   * Decided without a screen: what the store holds afterwards, the pane's writes (null: it has
   * none this cycle), and whether the engine remembers a look (with the sweep it stands for).
   */
  | {
      kind: 'settle';
      path: Exclude<PaneOutcome['path'], 'consumer' | 'quiet' | 'captured' | 'dead'>;
      stamp: StampedState | null;
      identity: Identity | null;
      cmds: TmuxCommand[] | null;
      look: { sweepMs?: number } | null;
    }
  /** Capture the screen and fold it. */
  | { kind: 'capture'; identity: AgentIdentity; storedAnchor: number | null };

const removal = (rec: PaneRecord, prev: StampedState | null): TmuxCommand[] => renderPlan(rec.paneId, { kind: 'remove' }, { guarded: true, prev });

export function triage(p: TriageInput): Triage {
  const { rec, prev, now } = p;
  if (isIgnored(rec.options['@agent_ignore'])) {
    return { kind: 'settle', path: 'ignored', stamp: null, identity: null, cmds: prev ? removal(rec, prev) : null, look: null };
  }
  if (p.quiet) return { kind: 'keep', path: 'quiet' };
  const stands = stampStands(prev, p.readAt, p.vouched, p.fold.freshnessMs, p.watching ? 0 : rec.windowActivity);
  if (!p.forced && !p.repaint && (stands || (p.stampede && prev))) return { kind: 'keep', path: 'consumer' };
  if (p.procs === null) return { kind: 'walk' };

  const storedAnchor = Number(rec.options['@tma_title_match_pid']) || null;
  const id = identify({
    paneCurrentCommand: rec.currentCommand,
    title: rec.title,
    panePid: rec.panePid,
    procs: p.procs,
    manifests: p.manifests,
    storedAnchorPid: storedAnchor,
    storedAgentName: rec.options['@agent_name'] ?? null,
    registration:
      prev && rec.options['@agent_name'] && rec.options['@agent_session'] ? { name: rec.options['@agent_name'], session: rec.options['@agent_session'] } : null,
  });

  if (id.kind !== 'agent') {
    if (prev) return { kind: 'settle', path: 'removed', stamp: null, identity: id, cmds: removal(rec, prev), look: {} };
    const cmds: TmuxCommand[] | null = storedAnchor !== null ? [['set-option', '-p', '-u', '-t', rec.paneId, KEY.titleMatchPid]] : null;
    return { kind: 'settle', path: 'none', stamp: null, identity: id, cmds, look: { sweepMs: NOT_AGENT_SWEEP_MS } };
  }

  if (id.pid === 0) {
    // Registered, but nothing we can walk (a container, a remote shell): hold, reap when dead.
    const d = reaperDecision({ procs: subtree(p.procs, rec.panePid), marker: Number(rec.options['@tma_reg_dead_since']) || null, now });
    if (d === 'remove') return { kind: 'settle', path: 'removed', stamp: null, identity: id, cmds: removal(rec, prev), look: null };
    const cmds: TmuxCommand[] | null =
      d === 'set-marker'
        ? [['set-option', '-p', '-t', rec.paneId, KEY.regDeadSince, String(now)]]
        : d === 'unset-marker'
          ? [['set-option', '-p', '-u', '-t', rec.paneId, KEY.regDeadSince]]
          : null;
    return { kind: 'settle', path: 'registered', stamp: prev, identity: id, cmds, look: null };
  }

  if (!p.forced && !p.repaint && prev && canReuseStamp(prev, rec.windowActivity, id.foregroundIsAgent, p.fold, now)) {
    return { kind: 'settle', path: 'reused', stamp: prev, identity: id, cmds: null, look: {} };
  }
  return { kind: 'capture', identity: id, storedAnchor };
}
