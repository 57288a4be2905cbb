// Text form of `ls`: one TAB-separated line per row. The local form keeps the reference's twelve
// columns byte for byte; the fleet form is a separate form with host and server in front.

import type { AgentRow } from './row.js';

const flag = (b: boolean | null) => (b ? '1' : '');

export function lsTextLine(r: AgentRow): string {
  return [
    r.pane, r.agent, r.state, r.detail ?? '', String(r.since), r.locator, r.title,
    flag(r.attention), flag(r.muted), r.repo ?? '', r.branch ?? '', flag(r.worktree),
  ].join('\t');
}

/** Fleet rows have no title: it never leaves its host. */
export function fleetLsTextLine(r: Omit<AgentRow, 'title'>): string {
  return [
    r.host, r.server, r.pane, r.agent, r.state, r.detail ?? '', String(r.since), r.locator,
    flag(r.attention), flag(r.muted), r.repo ?? '', r.branch ?? '', flag(r.worktree),
  ].join('\t');
}
