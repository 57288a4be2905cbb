// Command-line entry: parse against the verb table (cli/verb-table.ts), then load only the verb
// that runs (one-shot verbs such as `status` run every second from status bars, so start-up stays
// small: neither parsing nor help imports any verb's code).

import { flagsByVerb, parseArgv, UsageError, type Flags, type Parsed, type VerbMain, type VerbTable } from './args.js';
import { handOver, type Handoff } from './handoff.js';
import { VERB_FLAGS, VERB_TABLE } from './verb-table.js';

/** Each verb's flags (the parser's input; tests parse with it too). */
export const VERBS = VERB_FLAGS;

let pipeWatched = false;

/** A reader that went away (`tma ls | head -1`) is not an error: stop writing and exit quietly. */
function quietOnBrokenPipe(): void {
  if (pipeWatched) return;
  pipeWatched = true;
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
      throw e;
    });
  }
}

async function withSuggestion(table: VerbTable, message: string): Promise<string> {
  const m = /^unknown command "(.*)"$/.exec(message);
  if (!m) return message;
  const { suggestVerb } = await import('./help.js');
  const near = suggestVerb(table, m[1]!);
  return near ? `${message}; did you mean "${near}"?` : message;
}

/** `tma <argv>`; the exit code. `table` is the verb table (another only in tests). */
export async function run(argv: string[], handoff: Handoff = {}, table: VerbTable = VERB_TABLE): Promise<number> {
  quietOnBrokenPipe();
  handOver(handoff);
  let parsed: Parsed<Flags>;
  try {
    parsed = parseArgv(argv, flagsByVerb(table));
  } catch (e) {
    if (e instanceof UsageError) {
      // The hook path must never fail its agent, even on a malformed call.
      if (argv.includes('event')) return 0;
      process.stderr.write(`tma: ${await withSuggestion(table, e.message)}\n`);
      return 2;
    }
    throw e;
  }
  if (parsed.globals.version) parsed.verb = 'version';
  // Bare `tma` on a terminal is the picker; piped or in a script it stays the overview (exit 2).
  if (parsed.verb === null && !parsed.globals.help && table.pick !== undefined && process.stdin.isTTY && process.stdout.isTTY) parsed.verb = 'pick';
  if (parsed.globals.help || parsed.verb === null) {
    const { overview, verbHelp } = await import('./help.js');
    process.stdout.write((parsed.verb !== null && verbHelp(table, parsed.verb)) || overview(table));
    return parsed.verb === null && !parsed.globals.help ? 2 : 0;
  }
  const verb = parsed.verb;
  const entry = table[verb]!;
  if (entry.positionals === false && parsed.positionals.length) {
    process.stderr.write(`tma: ${verb} takes no arguments, got "${parsed.positionals.join(' ')}" (see \`tma help ${verb}\`)\n`);
    return 2;
  }
  const fleet = (parsed.globals.hub !== undefined || process.env.TMA_HUB) && entry.fleet !== undefined;
  const main: VerbMain = await (fleet ? entry.fleet : entry.load)();
  try {
    // A socket path of some host's tmux server only means something to a hub.
    if (!fleet && ['act', 'mute', 'jump'].includes(verb) && parsed.opts.server !== undefined) throw new UsageError('--server needs --hub');
    return await main(parsed, table);
  } catch (e) {
    // A message may quote what a host or hub sent (or a hostile argument): the one sanitiser,
    // loaded only on this path so that help and the quick verbs start without it.
    const { safeLines } = await import('../shared/terminal-text.js');
    if (e instanceof UsageError) {
      process.stderr.write(`tma: ${safeLines(e.message)}\n`);
      return 2;
    }
    // Every error a person can cause is one line; a stack trace only on request (TMA_DEBUG=1).
    // An ExitError (cli/local.ts, not imported here to keep start-up small) carries its exit code.
    const code = (e as { code?: unknown }).code;
    if (e instanceof Error && e.name === 'Error' && typeof code === 'number') {
      process.stderr.write(`tma: ${safeLines(e.message)}\n`);
      return code;
    }
    if (process.env.TMA_DEBUG) throw e;
    process.stderr.write(`tma: ${safeLines((e as Error).message ?? String(e))}\n`);
    return 1;
  }
}
