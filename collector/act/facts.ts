// One pane as the broker sees it: the same fields a poll cycle reads, for that pane alone, plus
// the lock. Read once before the gate and again under the lock.

import { currentPromptId } from '../core/prompt-id.js';
import { decodeStamp, episodeAt, KEY } from '../core/store-codec.js';
import { renderLockRead } from '../core/stamp-render.js';
import type { StampedState } from '../core/types.js';
import { LIST_PANES_FORMAT, locatorOf, parsePaneLine, type PaneRecord } from '../engine/pane-list.js';
import { isPaneGone, TmuxError } from '../tmux/errors.js';
import type { TmuxRunner } from '../tmux/runner.js';
import type { GateFacts } from './gate.js';

export interface PaneFacts extends GateFacts {
  pane: string;
  locator: string;
  /** The stamp, when the pane holds a readable one. */
  stamp: StampedState | null;
  /** Episode instant of the stamp (the --expect-episode-ms binder), null when unstamped. */
  episodeMs: number | null;
  stampedAt: number;
  /** `#{window_activity}`: epoch second of the window's last output, 0 when tmux has none. */
  windowActivity?: number;
  permissionRequest: string | null;
  apiEndpoint: string | null;
  /** Raw @agent_action. */
  lock: string;
  /** The prompt a blocked pane shows (its current episode's id); null otherwise or unknown. */
  promptId?: string | null;
  /** Raw `@tma_answered`: the last prompt a keys action answered here, and when. */
  answered?: string | null;
  /** What the prompt asks, as this host knows it (host-only text). */
  pendingSummary?: string | null;
  /** `@tma_hook_request`: the request an agent's PermissionRequest hook waits on (the hook lane). */
  hookRequest?: string | null;
}

const pct = (v: string | undefined): number | null => (v !== undefined && /^\d+(\.\d+)?$/.test(v) ? Number(v) : null);

/** Pure: a pane record (and its lock value) to the facts the gate and broker read. */
export function factsFromRecord(rec: PaneRecord, lock: string): PaneFacts {
  const decoded = decodeStamp(rec.options);
  const stamp = decoded.ok ? decoded.stamp : null;
  const o = rec.options;
  return {
    pane: rec.paneId,
    locator: locatorOf(rec),
    // An unreadable or absent stamp is not an agent anyone may act on.
    agent: stamp ? (o[KEY.name] ?? null) : null,
    state: stamp?.state ?? null,
    detail: stamp?.detail ?? null,
    contextPct: pct(o[KEY.contextPct]),
    session: stamp?.session ?? null,
    cwd: rec.currentPath,
    pid: stamp?.pid ?? 0,
    title: rec.title,
    stamp,
    episodeMs: stamp ? episodeAt(stamp) : null,
    stampedAt: stamp?.stampedAt ?? 0,
    windowActivity: rec.windowActivity,
    permissionRequest: o[KEY.permissionRequest] ?? null,
    apiEndpoint: o[KEY.apiEndpoint] ?? null,
    lock,
    promptId: stamp?.state === 'blocked' ? currentPromptId(o, stamp.since) : null,
    answered: o['@tma_answered'] ?? null,
    pendingSummary: stamp?.state === 'blocked' ? (o['@agent_pending_summary'] ?? null) : null,
    hookRequest: o['@tma_hook_request'] ?? null,
  };
}

/** Read one pane; null when tmux says it is gone. Other tmux failures propagate. */
export async function readPaneFacts(runner: TmuxRunner, pane: string): Promise<PaneFacts | null> {
  let outs: string[];
  try {
    outs = await runner.runChain([['display-message', '-p', '-t', pane, LIST_PANES_FORMAT], renderLockRead(pane)]);
  } catch (e) {
    if (e instanceof TmuxError && e.kind === 'failed' && isPaneGone(e.stderr)) return null;
    throw e;
  }
  const line = (outs[0] ?? '').replace(/\n$/, '');
  const rec = parsePaneLine(line);
  // `-t %N` on a pane that is gone resolves in some tmux builds to the current pane instead.
  if (rec.paneId !== pane) return null;
  return factsFromRecord(rec, (outs[1] ?? '').replace(/\n$/, ''));
}
