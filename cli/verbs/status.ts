import { selectRow } from '../../shared/selectors.js';
import { countRows, statusJson, statusPlain, statusProm, statusTmux } from '../../shared/status-format.js';
import { str, UsageError, type Parsed } from '../args.js';
import { guard, openLocal } from '../local.js';
import { selectorFrom } from '../selector-opts.js';
import { withRepos } from './ls.js';

const FORMATS = ['tmux', 'plain', 'json', 'prom'] as const;

export async function main(p: Parsed): Promise<number> {
  const format = str(p.opts.format) ?? 'tmux';
  if (!(FORMATS as readonly string[]).includes(format)) throw new UsageError(`unknown --format "${format}" (tmux, plain, json, prom)`);
  const sel = selectorFrom(p, { fleet: false });
  return guard(async () => {
    const local = await openLocal(p);
    try {
      const res = await local.engine.cycle();
      let rows = res.rows;
      // Repo labels cost a git call per cwd: only resolve them when a selector needs them.
      if (sel.repo !== null || sel.branch !== null) {
        rows = await withRepos(rows, new Map(res.panes.map((o) => [o.rec.paneId, o.rec.currentPath])));
      }
      rows = rows.filter((r) => selectRow(sel, r));
      const c = countRows(rows);
      const out =
        format === 'tmux' ? statusTmux(c) : format === 'plain' ? statusPlain(c) : format === 'json' ? statusJson(c) : statusProm(rows, res.now);
      process.stdout.write(out);
      return 0;
    } finally {
      local.close();
    }
  });
}
