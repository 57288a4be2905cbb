// `tma help [VERB]`.

import { UsageError, type Parsed } from '../args.js';
import { closestVerb, VERB_HELP } from '../help.js';

export async function main(p: Parsed): Promise<number> {
  const verb = p.positionals[0];
  if (p.positionals.length > 1) throw new UsageError(`help takes one command, got ${p.positionals.join(' ')}`);
  if (verb === undefined) {
    const { HELP } = await import('../main.js');
    process.stdout.write(HELP);
    return 0;
  }
  const text = VERB_HELP[verb];
  if (!text) {
    const near = closestVerb(verb, Object.keys(VERB_HELP));
    throw new UsageError(`unknown command "${verb}"${near ? `; did you mean "${near}"?` : ''}`);
  }
  process.stdout.write(`usage: ${text}\n`);
  return 0;
}
