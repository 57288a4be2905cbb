// Text form of `ls`: one TAB-separated line per row. The local form keeps the reference's twelve
// columns byte for byte; the fleet form is a separate form with host and server in front.

import type { AgentRow } from './row.js';
import { safeText } from './terminal-text.js';

const flag = (b: boolean | null) => (b ? '1' : '');

export function lsTextLine(r: AgentRow): string {
  return [
    r.pane,
    r.agent,
    r.state,
    r.detail ?? '',
    String(r.since),
    r.locator,
    r.title,
    flag(r.attention),
    flag(r.muted),
    r.repo ?? '',
    r.branch ?? '',
    flag(r.worktree),
  ]
    .map((f) => safeText(f))
    .join('\t');
}

/** Said where a host keeps what its prompts ask (`[remote] share_prompt = false`). */
export const NOT_SHARED = 'not shared by this host';

/**
 * What a blocked fleet row asks: its host's one-line summary, or that the host does not share it;
 * '' for a row that asks nothing (or a host that shares but had nothing to say).
 */
export function fleetAsks(r: Pick<AgentRow, 'state' | 'pending_summary'>, host: { shares_prompt: boolean | null } | undefined): string {
  if (r.state !== 'blocked') return '';
  if (r.pending_summary) return safeText(r.pending_summary);
  return host?.shares_prompt === false ? NOT_SHARED : '';
}

/** Fleet rows have no title: it never leaves its host. */
export function fleetLsTextLine(r: Omit<AgentRow, 'title'>): string {
  return [
    r.host,
    r.server,
    r.pane,
    r.agent,
    r.state,
    r.detail ?? '',
    String(r.since),
    r.locator,
    flag(r.attention),
    flag(r.muted),
    r.repo ?? '',
    r.branch ?? '',
    flag(r.worktree),
  ]
    .map((f) => safeText(f))
    .join('\t');
}
