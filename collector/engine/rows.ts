// From a pane record and what its options hold (or will hold after this cycle's write) to the
// agent row every surface shows.

import type { AgentRow } from '../../shared/row.js';
import { promptIdFromOption } from '../core/prompt-id.js';
import { episodeAt } from '../core/store-codec.js';
import type { StampedState } from '../core/types.js';
import { locatorOf, type PaneRecord } from './pane-list.js';

export interface RowContext {
  server: string;
  host: string;
  now: number;
}

const num = (v: string | undefined): number | null => (v !== undefined && /^\d+(\.\d+)?$/.test(v) ? Number(v) : null);

/** Legacy second-resolution clocks read as ms, as everywhere else. */
const ms = (v: string | undefined): number | null => {
  const n = num(v);
  return n === null ? null : n !== 0 && n < 1e12 ? n * 1000 : n;
};

export function rowOf(rec: PaneRecord, stamp: StampedState, agent: string, ctx: RowContext): AgentRow {
  const o = rec.options;
  const muteUntil = num(o['@agent_mute_until']);
  // What is being asked only means something while the pane waits on it.
  const blocked = stamp.state === 'blocked';
  const pending = (v: string | undefined): string | null => (blocked ? v ?? null : null);
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
    context: num(o['@agent_context_pct']),
    context_at_ms: ms(o['@agent_context_at']),
    muted: muteUntil !== null && muteUntil > ctx.now,
    tokens: num(o['@agent_tokens']),
    quota: null,
    cost_usd: null,
    repo: null,
    branch: null,
    worktree: null,
    pending_tool: pending(o['@agent_pending_tool']),
    pending_call: pending(o['@agent_pending_call']),
    pending_summary: pending(o['@agent_pending_summary']),
    server: ctx.server,
    host: ctx.host,
    prompt_id: blocked ? promptIdFromOption(o['@tma_prompt_id'], stamp.since) : null,
  };
}
