// `tma watch [--table] [selectors]`: a dashboard for a tmux pane or window. Local by default
// (this machine's server); with `--hub` the whole fleet, host on every row. Needs a terminal.

import { UsageError, type Parsed } from '../args.js';
import type { WATCH } from '../verb-flags.js';
import { guard } from '../local.js';
import { selectorFrom } from '../selector-opts.js';
import { hubUrlOf } from '../fleet/hub-client.js';
import { FleetSource } from '../watch/fleet-source.js';
import { LocalSource } from '../watch/local-source.js';
import { runView, type ViewOptions } from '../watch/run-view.js';
import type { Source } from '../watch/source.js';

/** The `-c/--client` value a key binding passed, or null (empty or an unexpanded format is absent). */
export const clientOf = (raw: string | undefined) => (raw && !raw.includes('#{') ? raw : null);

export function needTerminal(verb: string): void {
  if (!process.stdin.isTTY || !process.stdout.isTTY) throw new UsageError(`${verb} needs a terminal (for a stream of lines, use \`tma subscribe\`)`);
}

/** Run a view on the source the flags name; exits the process when it ends (a hub stream may linger). */
export async function viewMain(p: Parsed<typeof WATCH>, opts: ViewOptions): Promise<number> {
  const fleet = hubUrlOf(p, process.env) !== null;
  const sel = selectorFrom(p, { fleet });
  const client = clientOf(p.opts.client);
  return guard(async () => {
    const source: Source = fleet ? new FleetSource(p, client) : await LocalSource.open(p, sel, client);
    const code = await runView(source, opts);
    setTimeout(() => process.exit(code), 100).unref();
    return code;
  });
}

export async function main(p: Parsed<typeof WATCH>): Promise<number> {
  needTerminal('watch');
  return viewMain(p, { mode: 'watch', table: p.opts.table === true });
}
