// After a pane is judged: which prompt it shows (`@tma_prompt_id`) and, for a pane no hook
// described, what the prompt asks as read from the screen (`@agent_pending_summary`). Both are
// only meaningful while the pane is blocked; the row reads them only then.

import { oneLineSummary } from '../core/pending-text.js';
import { screenDialog } from '../core/dialog-text.js';
import { blockedRuleSaw, formatPromptOption, parseAnswered, promptId, promptIdFromOption, requestPromptId } from '../core/prompt-id.js';
import type { TmuxCommand } from '../core/stamp-render.js';
import type { AgentManifest, Snapshot, StampedState } from '../core/types.js';
import type { PaneRecord } from './pane-list.js';

export const PROMPT_KEY = '@tma_prompt_id';
export const ANSWERED_KEY = '@tma_answered';
/** An answered mark dated further ahead than this is from a stepped clock or another writer. */
export const FUTURE_MARK_MS = 2000;

/** The option values the writes leave behind (undefined: unset), for the row built this cycle. */
export function afterWrites(options: PaneRecord['options'], cmds: readonly TmuxCommand[]): PaneRecord['options'] {
  const out: Record<string, string | undefined> = { ...options };
  for (const c of cmds) {
    if (c[2] === '-u') delete out[c[5]!];
    else out[c[4]!] = c[5];
  }
  return out;
}

/** The prompt a blocked pane shows, as this look sees it. */
export interface PromptLook {
  id: string;
  /** The episode (`since`) it belongs to. */
  since: number;
}

/**
 * `held`: the id this process itself identified earlier in the episode, preferred over the pane
 * option (which another writer may have rewritten) when no blocked rule matches now. The id
 * decided on is returned with the writes, for the process's own record.
 */
export function promptWrites(
  rec: PaneRecord,
  stamp: StampedState | null,
  manifest: AgentManifest,
  snap: Snapshot,
  held: PromptLook | null = null,
): TmuxCommand[] & { look?: PromptLook } {
  const o = rec.options;
  const pane = rec.paneId;
  const set = (key: string, v: string): TmuxCommand => ['set-option', '-p', '-t', pane, key, v];
  const unset = (key: string): TmuxCommand => ['set-option', '-p', '-u', '-t', pane, key];
  const cmds: TmuxCommand[] & { look?: PromptLook } = [];
  if (stamp === null || stamp.state !== 'blocked') {
    if (o[PROMPT_KEY] !== undefined) cmds.push(unset(PROMPT_KEY));
    // Seen not blocked by a look that began after the answer: the answered prompt is gone, and
    // the same dialog shown again later is a new question. A mark dated ahead of this look (a
    // clock step, another writer) is gone too: otherwise it would outlive every prompt.
    const a = parseAnswered(o[ANSWERED_KEY]);
    if (a !== null && (snap.capturedAt > a.at || a.at > snap.capturedAt + FUTURE_MARK_MS)) cmds.push(unset(ANSWERED_KEY));
    return cmds;
  }
  // A blocked rule matching decides whether the screen shows a prompt now; what the prompt is
  // (its id and summary) comes from the last dialog on screen, never from history.
  const seen = blockedRuleSaw(manifest, snap) === null ? null : screenDialog(manifest, snap);
  const stored = held !== null && held.since === stamp.since ? held.id : promptIdFromOption(o[PROMPT_KEY], stamp.since);
  // Held blocked while no blocked rule matches (a repaint in progress, a hook claim): the prompt
  // is the one last identified in this episode, never a new one nobody has seen.
  // A request the agent named is the prompt, whatever the screen shows (see requestPromptId).
  const request = o['@agent_permission_request'];
  const id =
    request !== undefined && request !== ''
      ? requestPromptId(request, stamp.since)
      : seen === null && stored !== null
        ? stored
        : promptId({
            agent: manifest.name,
            seen: seen === null ? null : seen.text,
            evidenceAt: stamp.evidenceAt,
            permissionRequest: o['@agent_permission_request'] ?? null,
            pendingCall: o['@agent_pending_call'] ?? null,
          });
  cmds.look = { id, since: stamp.since };
  const value = formatPromptOption(stamp.since, id);
  if (o[PROMPT_KEY] !== value) cmds.push(set(PROMPT_KEY, value));
  // A hook's description (tool and call) outranks what the screen shows.
  if (o['@agent_pending_tool'] === undefined) {
    const summary = seen === null ? null : oneLineSummary(seen.summary);
    // A new prompt never keeps the last one's summary: with none readable it is cleared.
    const fresh = seen !== null || id !== stored;
    if (summary !== null && o['@agent_pending_summary'] !== summary) cmds.push(set('@agent_pending_summary', summary));
    else if (summary === null && fresh && o['@agent_pending_summary'] !== undefined) cmds.push(unset('@agent_pending_summary'));
  }
  return cmds;
}
