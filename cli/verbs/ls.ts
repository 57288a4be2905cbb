import { lsTextLine } from '../../shared/ls-text.js';
import { localRowObject, rowsDocument, toJsonLine } from '../../shared/row.js';
import { selectRow } from '../../shared/selectors.js';
import { rowsWithRepos } from '../../collector/repo-rows.js';
import { type Parsed } from '../args.js';
import type { LS } from '../verb-flags.js';
import { guard, openLocal, timedCycle } from '../local.js';
import { selectorFrom } from '../selector-opts.js';

export async function main(p: Parsed<typeof LS>): Promise<number> {
  const sel = selectorFrom(p, { fleet: false });
  return guard(async () => {
    const local = await openLocal(p);
    try {
      const res = await timedCycle(p, local.engine);
      const pane = p.opts.pane;
      const rows = (await rowsWithRepos(res)).filter((r) => selectRow(sel, r) && (!pane || r.pane === pane));
      if (p.opts.json === true) process.stdout.write(`${toJsonLine(rowsDocument(rows.map(localRowObject)))}\n`);
      else for (const r of rows) process.stdout.write(`${lsTextLine(r)}\n`);
      return 0;
    } finally {
      local.close();
    }
  });
}
