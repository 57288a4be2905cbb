// Command-line entry: parse, then load only the verb that runs (one-shot verbs such as `status`
// run every second from status bars, so start-up stays small).

import { GLOBAL_OPTS, SELECTOR_OPTS, UsageError, parseArgv, type OptSpec, type Parsed } from './args.js';
import { VERSION } from './version.js';

const sel = SELECTOR_OPTS;

export const VERBS: Record<string, OptSpec> = {
  version: {},
  ls: { json: { kind: 'bool' }, pane: { kind: 'value' }, ...sel },
  status: { format: { kind: 'value' }, ...sel },
  doctor: { json: { kind: 'bool' }, 'exit-code': { kind: 'bool' } },
  event: { agent: { kind: 'value' }, kind: { kind: 'value' }, pane: { kind: 'value' }, payload: { kind: 'value' } },
  'clear-attention': {},
};

const HELP = `tma ${VERSION} — which coding agent in tmux needs you, on this machine or across a fleet

usage: tma [global flags] <command> [flags]

commands:
  ls [--json] [--pane ID] [selectors]     list agent panes and their states
  status [--format tmux|plain|json|prom]  counts for a status bar or a scraper
  doctor [--json] [--exit-code]           what is wrong with detection on this server
  version                                 print the version

selectors: --state LIST --agent NAME --session NAME --repo NAME --branch NAME
global flags: --socket-name/-L NAME, --socket-path/-S PATH, --config PATH, --manifest-dir DIR
`;

type VerbMain = (p: Parsed) => Promise<number>;

async function load(verb: string): Promise<VerbMain> {
  switch (verb) {
    case 'ls':
      return (await import('./verbs/ls.js')).main;
    case 'status':
      return (await import('./verbs/status.js')).main;
    case 'doctor':
      return (await import('./verbs/doctor.js')).main;
    case 'event':
      return (await import('./verbs/event.js')).main;
    case 'clear-attention':
      return (await import('./verbs/clear-attention.js')).main;
    default:
      return async () => {
        process.stdout.write(`tma ${VERSION}\n`);
        return 0;
      };
  }
}

export async function run(argv: string[]): Promise<number> {
  let parsed: Parsed;
  try {
    parsed = parseArgv(argv, VERBS);
  } catch (e) {
    if (e instanceof UsageError) {
      // The hook path must never fail its agent, even on a malformed call.
      if (argv.includes('event')) return 0;
      process.stderr.write(`tma: ${e.message}\n`);
      return 2;
    }
    throw e;
  }
  if (parsed.globals.version) parsed.verb = 'version';
  if (parsed.globals.help || parsed.verb === null) {
    process.stdout.write(HELP);
    return parsed.verb === null && !parsed.globals.help ? 2 : 0;
  }
  const main = await load(parsed.verb);
  try {
    return await main(parsed);
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`tma: ${e.message}\n`);
      return 2;
    }
    throw e;
  }
}

export { GLOBAL_OPTS };
