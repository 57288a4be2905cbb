import { isStatusFormat, renderStatus } from '../../shared/status-format.js';
import { UsageError, type Parsed } from '../args.js';
import type { STATUS } from '../verb-flags.js';
import { takeStatusListing } from '../handoff.js';
import { guard, timedCycle } from '../local.js';
import { agentServersHint, eachCycle, openLocals } from '../servers.js';
import { selectorFrom } from '../selector-opts.js';
import { selectedRows } from '../../collector/repo-rows.js';

export async function main(p: Parsed<typeof STATUS>): Promise<number> {
  const format = p.opts.format ?? 'tmux';
  if (!isStatusFormat(format)) throw new UsageError(`unknown --format "${format}" (tmux, plain, json, prom)`);
  const sel = selectorFrom(p, { fleet: false });
  return guard(
    async () => {
      // A quick status that declined read the server already (cli/handoff.ts).
      const locals = await openLocals(p, { firstListing: takeStatusListing() });
      try {
        let now = Date.now();
        const rows = await eachCycle(locals, async (local) => {
          const res = await timedCycle(p, local.engine);
          now = res.now;
          return selectedRows(res, sel);
        });
        process.stdout.write(renderStatus(format, rows, now, locals[0]!.config.status));
        return 0;
      } finally {
        for (const l of locals) l.close();
      }
    },
    () => agentServersHint(p, null),
  );
}
