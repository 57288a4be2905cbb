import { lsTable } from '../../shared/ls-table.js';
import { lsTextLine } from '../../shared/ls-text.js';
import { localRowObject, rowsDocument, toJsonLine } from '../../shared/row.js';
import { selectRow } from '../../shared/selectors.js';
import { rowsWithRepos } from '../../collector/repo-rows.js';
import { type Parsed } from '../args.js';
import { humanLs } from '../ls-form.js';
import type { LS } from '../verb-flags.js';
import { guard, timedCycle } from '../local.js';
import { agentServersHint, coversAllServers, eachCycle, openLocals, socketOf } from '../servers.js';
import { selectorFrom } from '../selector-opts.js';

export async function main(p: Parsed<typeof LS>): Promise<number> {
  const sel = selectorFrom(p, { fleet: false });
  const human = humanLs(p);
  return guard(
    async () => {
      const locals = await openLocals(p);
      try {
        const pane = p.opts.pane;
        const rows = await eachCycle(locals, async (local) =>
          (await rowsWithRepos(await timedCycle(p, local.engine))).filter((r) => selectRow(sel, r) && (!pane || r.pane === pane)),
        );
        if (p.opts.json === true) process.stdout.write(`${toJsonLine(rowsDocument(rows.map(localRowObject)))}\n`);
        else if (human) {
          const servers = new Set(rows.map((r) => r.server)).size > 1;
          if (rows.length) process.stdout.write(lsTable(rows, Date.now(), { server: servers, title: true }));
        } else for (const r of rows) process.stdout.write(`${lsTextLine(r)}\n`);
        // Nothing where it looked: say where agents do run (stderr, so a script's stdout stays empty).
        // --json keeps an empty stderr: an empty list is the answer a program asked for.
        if (rows.length === 0 && p.opts.json !== true && locals.length === 1 && !coversAllServers(p)) {
          const hint = await agentServersHint(p, socketOf(locals[0]!));
          if (hint || human) process.stderr.write(`tma: no agent panes here${hint}\n`);
        } else if (rows.length === 0 && human) process.stderr.write('tma: no agent panes on any tmux server\n');
        return 0;
      } finally {
        for (const l of locals) l.close();
      }
    },
    () => agentServersHint(p, null),
  );
}
