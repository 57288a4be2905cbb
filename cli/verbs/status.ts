import { countRows, statusJson, statusPlain, statusProm, statusTmux } from '../../shared/status-format.js';
import { str, UsageError, type Parsed } from '../args.js';
import { guard, openLocal, timedCycle } from '../local.js';
import { selectorFrom } from '../selector-opts.js';
import { selectedRows } from './ls.js';

const FORMATS = ['tmux', 'plain', 'json', 'prom'] as const;

export async function main(p: Parsed): Promise<number> {
  const format = str(p.opts.format) ?? 'tmux';
  if (!(FORMATS as readonly string[]).includes(format)) throw new UsageError(`unknown --format "${format}" (tmux, plain, json, prom)`);
  const sel = selectorFrom(p, { fleet: false });
  return guard(async () => {
    const local = await openLocal(p);
    try {
      const res = await timedCycle(p, local.engine);
      const rows = await selectedRows(res, sel);
      const c = countRows(rows);
      const out =
        format === 'tmux' ? statusTmux(c, local.config.status) : format === 'plain' ? statusPlain(c, local.config.status) : format === 'json' ? statusJson(c, rows) : statusProm(rows, res.now);
      process.stdout.write(out);
      return 0;
    } finally {
      local.close();
    }
  });
}
