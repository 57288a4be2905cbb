import { lsTextLine } from '../../shared/ls-text.js';
import { localRowObject, rowsDocument, toJsonLine, type AgentRow } from '../../shared/row.js';
import { selectRow, type Selector } from '../../shared/selectors.js';
import type { CycleResult } from '../../collector/engine/cycle.js';
import { repoOf } from '../../collector/engine/repo.js';
import { flag, str, type Parsed } from '../args.js';
import { guard, openLocal, timedCycle } from '../local.js';
import { selectorFrom } from '../selector-opts.js';

/** Fill the repo trio from each pane's cwd (the engine leaves it null). */
export async function withRepos(rows: AgentRow[], cwdOf: Map<string, string>): Promise<AgentRow[]> {
  return Promise.all(rows.map(async (r) => ({ ...r, ...(await repoOf(cwdOf.get(r.pane) ?? '')) })));
}

export function cwdOf(res: CycleResult): Map<string, string> {
  return new Map(res.panes.map((o) => [o.rec.paneId, o.rec.currentPath]));
}

/** This cycle's rows the selector keeps; repo labels are resolved only when it filters on them. */
export async function selectedRows(res: CycleResult, sel: Selector): Promise<AgentRow[]> {
  const rows = sel.repo !== null || sel.branch !== null ? await withRepos(res.rows, cwdOf(res)) : res.rows;
  return rows.filter((r) => selectRow(sel, r));
}

export async function main(p: Parsed): Promise<number> {
  const sel = selectorFrom(p, { fleet: false });
  return guard(async () => {
    const local = await openLocal(p);
    try {
      const res = await timedCycle(p, local.engine);
      const pane = str(p.opts.pane);
      const rows = (await withRepos(res.rows, cwdOf(res))).filter((r) => selectRow(sel, r) && (!pane || r.pane === pane));
      if (flag(p.opts.json)) process.stdout.write(`${toJsonLine(rowsDocument(rows.map(localRowObject)))}\n`);
      else for (const r of rows) process.stdout.write(`${lsTextLine(r)}\n`);
      return 0;
    } finally {
      local.close();
    }
  });
}
