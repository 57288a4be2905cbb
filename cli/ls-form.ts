// Which form `ls` prints: JSON on request, the table a person reads on a terminal, and otherwise
// (piped, or `--tsv`) the tab-separated columns scripts already parse.

import { UsageError, type Parsed } from './args.js';
import type { LS } from './verb-flags.js';

/** The table: on a terminal, unless `--tsv` (or `--json`) asks for a script form. */
export function humanLs(p: Parsed<typeof LS>, isTTY = process.stdout.isTTY === true): boolean {
  if (p.opts.json === true && p.opts.tsv === true) throw new UsageError('--json cannot be combined with --tsv');
  return p.opts.json !== true && p.opts.tsv !== true && isTTY;
}
