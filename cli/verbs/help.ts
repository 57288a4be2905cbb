// `tma help [VERB]`, from the verb table it is handed.

import { UsageError, type Parsed, type VerbTable } from '../args.js';
import { overview, suggestVerb, verbHelp } from '../help.js';

export async function main(p: Parsed, table: VerbTable): Promise<number> {
  const verb = p.positionals[0];
  if (p.positionals.length > 1) throw new UsageError(`help takes one command, got ${p.positionals.join(' ')}`);
  if (verb === undefined) {
    process.stdout.write(overview(table));
    return 0;
  }
  const text = verbHelp(table, verb);
  if (text === null) {
    const near = suggestVerb(table, verb);
    throw new UsageError(`unknown command "${verb}"${near ? `; did you mean "${near}"?` : ''}`);
  }
  process.stdout.write(text);
  return 0;
}
