// Repo labels for a cycle's rows: the engine leaves repo, branch and worktree null (a git call per
// pane would slow every cycle), and each reader that shows or filters on them fills them here, the
// one-shot verbs and the long-running collector alike.

import type { AgentRow } from '../shared/row.js';
import { selectRow, type Selector } from '../shared/selectors.js';
import type { CycleResult } from './engine/cycle.js';
import { repoOf } from './engine/repo.js';

/** Each pane's cwd, by pane id, as the cycle listed it. */
export function cwdOf(res: Pick<CycleResult, 'panes'>): Map<string, string> {
  return new Map(res.panes.map((o) => [o.rec.paneId, o.rec.currentPath]));
}

/** Fill the repo trio from each pane's cwd. */
export async function withRepos(rows: readonly AgentRow[], cwd: Map<string, string>): Promise<AgentRow[]> {
  return Promise.all(rows.map(async (r) => ({ ...r, ...(await repoOf(cwd.get(r.pane) ?? '')) })));
}

/** A cycle's rows with their repo labels. */
export function rowsWithRepos(res: Pick<CycleResult, 'rows' | 'panes'>): Promise<AgentRow[]> {
  return withRepos(res.rows, cwdOf(res));
}

/** This cycle's rows the selector keeps; repo labels are resolved only when it filters on them. */
export async function selectedRows(res: Pick<CycleResult, 'rows' | 'panes'>, sel: Selector): Promise<AgentRow[]> {
  const rows = sel.repo !== null || sel.branch !== null ? await rowsWithRepos(res) : res.rows;
  return rows.filter((r) => selectRow(sel, r));
}
