import { isStatusFormat, renderStatus } from '../../shared/status-format.js';
import { UsageError, type Parsed } from '../args.js';
import type { STATUS } from '../verb-flags.js';
import { takeStatusListing } from '../handoff.js';
import { guard, openLocal, timedCycle } from '../local.js';
import { selectorFrom } from '../selector-opts.js';
import { selectedRows } from '../../collector/repo-rows.js';

export async function main(p: Parsed<typeof STATUS>): Promise<number> {
  const format = p.opts.format ?? 'tmux';
  if (!isStatusFormat(format)) throw new UsageError(`unknown --format "${format}" (tmux, plain, json, prom)`);
  const sel = selectorFrom(p, { fleet: false });
  return guard(async () => {
    // A quick status that declined read the server already (cli/handoff.ts).
    const local = await openLocal(p, { firstListing: takeStatusListing() });
    try {
      const res = await timedCycle(p, local.engine);
      const rows = await selectedRows(res, sel);
      process.stdout.write(renderStatus(format, rows, res.now, local.config.status));
      return 0;
    } finally {
      local.close();
    }
  });
}
