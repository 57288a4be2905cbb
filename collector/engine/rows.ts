// From a pane record and what its options hold (or will hold after this cycle's write) to the
// agent row every surface shows.

import type { AgentRow } from '../../shared/row.js';
import { currentPromptId } from '../core/prompt-id.js';
import { episodeAt } from '../core/store-codec.js';
import type { StampedState } from '../core/types.js';
import { locatorOf, type PaneRecord } from './pane-list.js';

export interface RowContext {
  server: string;
  host: string;
  now: number;
}

const num = (v: string | undefined): number | null => (v !== undefined && /^\d+(\.\d+)?$/.test(v) ? Number(v) : null);

/** A plain unsigned integer option, optionally bounded; anything else reads as absent. */
const uint = (v: string | undefined, max = Number.MAX_SAFE_INTEGER): number | null => {
  if (v === undefined || !/^\d+$/.test(v)) return null;
  const n = Number(v);
  return n <= max ? n : null;
};

/** The quota object of the row: present only when a usage reading stamped a percentage. */
function quotaOf(o: PaneRecord['options']): Record<string, unknown> | null {
  const pct = uint(o['@agent_quota_pct'], 100);
  if (pct === null) return null;
  return {
    pct,
    window: o['@agent_quota_window'] ?? null,
    resets_at_ms: uint(o['@agent_quota_resets_at']),
    at_ms: uint(o['@agent_quota_at']),
  };
}

export function rowOf(rec: PaneRecord, stamp: StampedState, agent: string, ctx: RowContext): AgentRow {
  const o = rec.options;
  const muteUntil = num(o['@agent_mute_until']);
  // What is being asked only means something while the pane waits on it.
  const blocked = stamp.state === 'blocked';
  const pending = (v: string | undefined): string | null => (blocked ? (v ?? null) : null);
  return {
    pane: rec.paneId,
    agent,
    state: stamp.state,
    detail: stamp.detail,
    since: stamp.since,
    since_ms: stamp.since,
    episode_ms: episodeAt(stamp),
    locator: locatorOf(rec),
    title: rec.title,
    attention: stamp.attention,
    done: stamp.state === 'idle' && stamp.attention,
    session: stamp.session,
    transcript: null,
    permission_request: o['@agent_permission_request'] ?? null,
    stamped_at_ms: stamp.stampedAt || null,
    // The gauge reads as stored (a 0..255 integer, no clamp) and its marker as written, in ms.
    context: uint(o['@agent_context_pct'], 255),
    context_at_ms: uint(o['@agent_context_at']),
    muted: muteUntil !== null && muteUntil > ctx.now,
    tokens: uint(o['@agent_tokens']),
    quota: quotaOf(o),
    cost_usd: o['@agent_cost_usd'] !== undefined && /^\d+(\.\d+)?$/.test(o['@agent_cost_usd']) ? Number(o['@agent_cost_usd']) : null,
    repo: null,
    branch: null,
    worktree: null,
    pending_tool: pending(o['@agent_pending_tool']),
    pending_call: pending(o['@agent_pending_call']),
    pending_summary: pending(o['@agent_pending_summary']),
    server: ctx.server,
    host: ctx.host,
    prompt_id: blocked ? currentPromptId(o, stamp.since) : null,
  };
}
