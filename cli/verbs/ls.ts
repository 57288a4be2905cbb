import { lsTextLine } from '../../shared/ls-text.js';
import { localRowObject, rowsDocument, toJsonLine, type AgentRow } from '../../shared/row.js';
import { selectRow } from '../../shared/selectors.js';
import { repoOf } from '../../collector/engine/repo.js';
import { flag, str, type Parsed } from '../args.js';
import { guard, openLocal } from '../local.js';
import { selectorFrom } from '../selector-opts.js';

/** Fill the repo trio from each pane's cwd (the engine leaves it null). */
export async function withRepos(rows: AgentRow[], cwdOf: Map<string, string>): Promise<AgentRow[]> {
  return Promise.all(rows.map(async (r) => ({ ...r, ...(await repoOf(cwdOf.get(r.pane) ?? '')) })));
}

export async function main(p: Parsed): Promise<number> {
  const sel = selectorFrom(p, { fleet: false });
  return guard(async () => {
    const local = await openLocal(p);
    try {
      const res = await local.engine.cycle();
      const cwd = new Map(res.panes.map((o) => [o.rec.paneId, o.rec.currentPath]));
      const pane = str(p.opts.pane);
      const rows = (await withRepos(res.rows, cwd)).filter((r) => selectRow(sel, r) && (!pane || r.pane === pane));
      if (flag(p.opts.json)) process.stdout.write(`${toJsonLine(rowsDocument(rows.map(localRowObject)))}\n`);
      else for (const r of rows) process.stdout.write(`${lsTextLine(r)}\n`);
      return 0;
    } finally {
      local.close();
    }
  });
}
