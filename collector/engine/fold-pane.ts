// One captured pane folded into its writes: the screen's evidence weighed against the prior
// stamp, the plan the verdict makes, and what the store will hold once the writes land. Pure: the
// engine passes in the prior its memory adjusted and records the look from the verdict.

import { fnv1a64 } from '../core/fnv.js';
import { anchorUpdate } from '../core/identity.js';
import { fold } from '../core/fold.js';
import { parseAnswered } from '../core/prompt-id.js';
import { evaluate } from '../core/rules.js';
import { changesNothing, planFromVerdict, projectStamp } from '../core/stamp-plan.js';
import { renderPlan, type TmuxCommand } from '../core/stamp-render.js';
import { KEY } from '../core/store-codec.js';
import type { FoldConfig, StampedState, Verdict } from '../core/types.js';
import type { Shot } from '../tmux/capture.js';
import type { PaneRecord } from './pane-list.js';
import { ANSWERED_KEY, afterWrites, promptWrites, type PromptLook } from './prompt-writes.js';
import type { AgentIdentity } from './triage.js';

export interface FoldInput {
  rec: PaneRecord;
  shot: Shot;
  identity: AgentIdentity;
  /** The stamp the listing held, and whether it could be read at all. */
  prev: StampedState | null;
  decodedOk: boolean;
  /** The prior the fold weighs the screen against (prev as the engine's memory sees it). */
  prior: StampedState | null;
  /** The stored title anchor (@tma_title_match_pid). */
  storedAnchor: number | null;
  /** Writes may carry `-F` guards (the probe's answer). */
  guarded: boolean;
  watching: boolean;
  /** The prompt this process saw on the pane at its last look (see Engine.promptSeen). */
  seenPrompt: PromptLook | null;
  fold: FoldConfig;
  now: number;
}

export interface Folded {
  verdict: Verdict;
  /** What the store holds once the writes land. */
  stamp: StampedState | null;
  /** The pane's record as the writes leave it (the prompt options). */
  rec: PaneRecord;
  cmds: TmuxCommand[];
  /** The prompt this look saw (null: none). */
  look: PromptLook | null;
}

/**
 * A hook's blocked claim sent before tma answered the prompt, over a screen that shows no prompt
 * any more: the dialog it stood for is gone, and the agent's next hook event may be seconds away
 * (a process per event, started late under load). Until then the screen says what the pane does;
 * a dialog still showing (a key that did not take) keeps the claim.
 */
function answeredClaimGone(prior: StampedState | null, rec: PaneRecord, screenBlocked: boolean): boolean {
  if (prior === null || prior.source !== 'hook' || prior.state !== 'blocked' || screenBlocked) return false;
  const answered = parseAnswered(rec.options[ANSWERED_KEY]);
  const sent = Number(rec.options[KEY.hookAt] ?? '') || prior.evidenceAt;
  return answered !== null && answered.at > sent;
}

export function foldPane(c: FoldInput): Folded {
  const { rec, identity: id, now } = c;
  const tail = c.shot.tail;
  const snap = { title: c.shot.title, tail, scrollPosition: rec.scrollPosition, visibleHeight: rec.height || null, capturedAt: now };
  const ev = evaluate(id.manifest, snap);
  const facts = { pid: id.pid, foregroundIsAgent: id.foregroundIsAgent, scrolled: (rec.scrollPosition ?? 0) > 0, historyView: ev.historyView };
  const screenBlocked = ev.evidence.some((e) => e.provenance !== 'hook_event' && e.claim.kind === 'state' && e.claim.state === 'blocked');
  // Weighed like a demoted claim: the screen lands over it, never over a hook event sent since.
  const prior = c.prior !== null && answeredClaimGone(c.prior, rec, screenBlocked) ? { ...c.prior, source: 'capture' as const } : c.prior;
  const verdict = fold(prior, facts, ev.evidence, id.manifest, c.fold, now);
  let plan = planFromVerdict(verdict, { pid: id.pid, name: id.manifest.name, hash: fnv1a64(tail), now });
  // A demoted pane's stale hook claim is no longer protected in the store either; a hook claim
  // that landed after the listing still is.
  if (c.prev?.source === 'hook' && prior?.source !== 'hook' && plan.kind === 'publish' && !plan.episodeReset) {
    plan = { ...plan, guard: { kind: 'overrule_claim', claimAt: c.prev.evidenceAt } };
  }
  const projected = c.decodedOk ? projectStamp(c.prev, plan, { guarded: c.guarded }) : null;
  // A watched pane whose stamp would come back as it is keeps it: the engine remembers the look,
  // and the server heartbeat tells one-shot readers the old stamp time still stands.
  const unchanged =
    c.watching &&
    changesNothing(c.prev, projected, {
      now,
      name: id.manifest.name,
      storedName: rec.options['@agent_name'] ?? null,
      renewHookMs: Math.min(c.fold.hookDecayMs, c.fold.blockedDecayMs) / 2,
    });
  const cmds = unchanged ? [] : renderPlan(rec.paneId, plan, { guarded: c.guarded, prev: c.prev });
  const anchor = anchorUpdate(id, c.storedAnchor);
  if (anchor.kind === 'set') cmds.push(['set-option', '-p', '-t', rec.paneId, KEY.titleMatchPid, String(anchor.pid)]);
  else if (anchor.kind === 'unset') cmds.push(['set-option', '-p', '-u', '-t', rec.paneId, KEY.titleMatchPid]);
  // Over a stamp we could not read, the guards decide against values we never saw: keep the
  // pane out of rows and counts until a later cycle reads back what actually landed.
  const stamp = unchanged ? c.prev : projected;
  const prompt = promptWrites(rec, stamp, id.manifest, snap, c.seenPrompt);
  return {
    verdict,
    stamp,
    rec: prompt.length ? { ...rec, options: afterWrites(rec.options, prompt) } : rec,
    cmds: [...cmds, ...prompt],
    look: prompt.look ?? null,
  };
}
