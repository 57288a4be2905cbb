// Command-line entry: parse, then load only the verb that runs (one-shot verbs such as `status`
// run every second from status bars, so start-up stays small).

import { GLOBAL_OPTS, SELECTOR_OPTS, STATUS_OPTS, UsageError, parseArgv, type OptSpec, type Parsed } from './args.js';
import { handOver, type Handoff } from './handoff.js';
import { SETUP_VERBS } from './setup-verbs.js';
import { VERSION } from './version.js';

const sel = SELECTOR_OPTS;

export const VERBS: Record<string, OptSpec> = {
  version: {},
  ls: { json: { kind: 'bool' }, pane: { kind: 'value' }, ...sel },
  status: STATUS_OPTS,
  doctor: { json: { kind: 'bool' }, 'exit-code': { kind: 'bool' } },
  event: { agent: { kind: 'value' }, kind: { kind: 'value' }, pane: { kind: 'value' }, payload: { kind: 'value' } },
  'clear-attention': {},
  act: {
    json: { kind: 'bool' }, pane: { kind: 'value' }, ...sel, all: { kind: 'bool' }, 'dry-run': { kind: 'bool' },
    arg: { kind: 'multi' }, force: { kind: 'bool' }, yes: { kind: 'bool' }, list: { kind: 'bool' }, slot: { kind: 'value' },
    'expect-episode-ms': { kind: 'value' }, 'expect-permission-request': { kind: 'value' }, server: { kind: 'value' },
    'expect-prompt': { kind: 'value' }, again: { kind: 'bool' },
  },
  mute: { pane: { kind: 'value' }, ...sel, for: { kind: 'value' }, clear: { kind: 'bool' } },
  supervise: { pane: { kind: 'value' }, name: { kind: 'value' }, nonce: { kind: 'value' }, 'timeout-ms': { kind: 'value' } },
  collector: { stdio: { kind: 'bool' }, 'host-name': { kind: 'value' }, interval: { kind: 'value' } },
  hub: {
    listen: { kind: 'value' }, 'no-local': { kind: 'bool' },
    host: { kind: 'value' }, client: { kind: 'value' }, role: { kind: 'value' }, dir: { kind: 'value' }, force: { kind: 'bool' },
    print: { kind: 'bool' },
  },
  forget: {},
  debug: { trigger: { kind: 'value' }, json: { kind: 'bool' } },
  wait: {
    until: { kind: 'value' }, pane: { kind: 'value' }, any: { kind: 'bool' }, all: { kind: 'bool' },
    count: { kind: 'value' }, since: { kind: 'value' }, timeout: { kind: 'value' }, json: { kind: 'bool' }, ...sel,
  },
  subscribe: {
    json: { kind: 'bool' }, interval: { kind: 'value' }, 'changes-only': { kind: 'bool' }, events: { kind: 'bool' }, ...sel,
  },
  ...SETUP_VERBS,
};

export const HELP = `tma ${VERSION} — which coding agent in tmux needs you, on this machine or across a fleet

usage: tma [global flags] <command> [flags]

commands:
  ls [--json] [--pane ID] [selectors]     list agent panes and their states
  status [--format tmux|plain|json|prom]  counts for a status bar or a scraper
  wait --until STATES [--pane ID|--any|--all|--count N] [--since MS] [--timeout SECS] [--json]
                                          block until agents reach a state (exit 124 on timeout)
  subscribe --json [--interval SECS] [--changes-only] [--events]
                                          stream snapshots or state transitions, one JSON line each
  doctor [--json] [--exit-code]           what is wrong with detection on this server
  act NAME [--pane ID | selectors [--all]] [--dry-run] [--yes] [--force] [--json]
      [--slot KEY] [--expect-episode-ms MS] [--expect-permission-request ID] [--arg V]...
      [--expect-prompt ID] [--again]
                                          fire an action (approve, deny, …) at agent panes
  act --list [--json] [--pane ID]         the actions, and which would fire on a pane
  mute [--pane ID | selectors] [--for DURATION | --clear]
                                          silence notifications (default: indefinitely)
  collector --hub URL --token-file F | --stdio [--host-name NAME] [--interval SECS]
                                          publish every tmux server's agents to a hub
  hub [--listen ADDR:PORT] [--config hub.toml] [--no-local]
                                          serve the fleet (default 127.0.0.1:7480), with this
                                          machine's own agents unless --no-local
  hub token --host NAME | --client NAME --role viewer|operator [--dir DIR] [--force] [--print]
                                          mint a 0600 token file and print its hub.toml entry

fleet: --hub URL (or TMA_HUB) with --token-file F (or TMA_HUB_TOKEN, a token or @path) runs
  ls, status, wait, subscribe and act against a hub, over every host; --host NAME selects one;
  act NAME --host H [--server S] --pane ID fires on that host (an operator token; --slot KEY
  replays instead of firing twice)
  forget HOST (with --hub)                drop a host that is gone, and its rows (operator token)
  version                                 print the version
  debug notify-test --trigger blocked|done|context_high
                                          fire a sample notification through [notify]
  debug transitions [--json]              the last state changes the running collector saw

setup:
  init [--yes]                            wire the agents on $PATH, install keys, run doctor
  install-hooks AGENT|--all [--check] [--uninstall] [--yes]
                                          wire an agent's hooks (shows a diff, asks first)
  install-keys [--mouse] [--check] [--uninstall] [--yes]
                                          tmux key bindings for jump
  jump [--attention|--blocked|--next|--back|--home|--pane ID|--menu]
                                          focus the agent that needs you, and back
  completions bash|zsh|fish               shell completion script
  help [COMMAND]                          one command's usage and examples

selectors: --state LIST --agent NAME --session NAME --repo NAME --branch NAME
global flags: --socket-name/-L NAME, --socket-path/-S PATH, --config PATH, --manifest-dir DIR
  --log-level LEVEL (hub and collector; or TMA_LOG_LEVEL)
`;

type VerbMain = (p: Parsed) => Promise<number>;

/** Verbs that read a hub instead of local tmux when `--hub` or TMA_HUB names one. */
const FLEET_READ_VERBS = new Set(['ls', 'status', 'wait', 'subscribe']);

async function loadFleet(verb: string): Promise<VerbMain | null> {
  if (verb === 'act') return (await import('./fleet/act-verb.js')).main;
  if (verb === 'forget') return (await import('./fleet/forget-verb.js')).main;
  if (!FLEET_READ_VERBS.has(verb)) return null;
  const m = await import('./fleet/read-verbs.js');
  return verb === 'ls' ? m.ls : verb === 'status' ? m.status : verb === 'wait' ? m.wait : m.subscribe;
}

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
    case 'wait':
      return (await import('./verbs/wait.js')).main;
    case 'subscribe':
      return (await import('./verbs/subscribe.js')).main;
    case 'clear-attention':
      return (await import('./verbs/clear-attention.js')).main;
    case 'act':
      return (await import('./verbs/act.js')).main;
    case 'supervise':
      return (await import('./verbs/act.js')).superviseMain;
    case 'mute':
      return (await import('./verbs/mute.js')).main;
    case 'collector':
      return (await import('./verbs/collector.js')).main;
    case 'hub':
      return (await import('./verbs/hub.js')).main;
    case 'forget':
      return async () => {
        throw new UsageError('forget works on a hub: tma --hub URL forget HOST');
      };
    case 'install-hooks':
      return (await import('./verbs/install-hooks.js')).main;
    case 'install-keys':
      return (await import('./verbs/install-keys.js')).main;
    case 'init':
      return (await import('./verbs/init.js')).main;
    case 'jump':
      return (await import('./verbs/jump.js')).main;
    case 'completions':
      return (await import('./verbs/completions.js')).main;
    case 'help':
      return (await import('./verbs/help.js')).main;
    case 'debug':
      return (await import('./verbs/debug.js')).main;
    default:
      return async () => {
        process.stdout.write(`tma ${VERSION}\n`);
        return 0;
      };
  }
}

/** A reader that went away (`tma ls | head -1`) is not an error: stop writing and exit quietly. */
function quietOnBrokenPipe(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
      throw e;
    });
  }
}

/** Verbs that take flags only; a stray word is a usage error rather than silently ignored. */
const NO_POSITIONALS = new Set(['version', 'ls', 'status', 'doctor', 'mute', 'collector', 'wait', 'subscribe', 'install-keys', 'init', 'jump']);

async function withSuggestion(message: string): Promise<string> {
  const m = /^unknown command "(.*)"$/.exec(message);
  if (!m) return message;
  const { closestVerb } = await import('./help.js');
  const near = closestVerb(m[1]!, Object.keys(VERBS).filter((v) => !['event', 'clear-attention', 'supervise'].includes(v)));
  return near ? `${message}; did you mean "${near}"?` : message;
}

export async function run(argv: string[], handoff: Handoff = {}): Promise<number> {
  quietOnBrokenPipe();
  handOver(handoff);
  let parsed: Parsed;
  try {
    parsed = parseArgv(argv, VERBS);
  } catch (e) {
    if (e instanceof UsageError) {
      // The hook path must never fail its agent, even on a malformed call.
      if (argv.includes('event')) return 0;
      process.stderr.write(`tma: ${await withSuggestion(e.message)}\n`);
      return 2;
    }
    throw e;
  }
  if (parsed.globals.version) parsed.verb = 'version';
  if (parsed.globals.help && parsed.verb !== null) {
    const { VERB_HELP } = await import('./help.js');
    process.stdout.write(VERB_HELP[parsed.verb] ? `usage: ${VERB_HELP[parsed.verb]}\n` : HELP);
    return 0;
  }
  if (parsed.verb !== null && NO_POSITIONALS.has(parsed.verb) && parsed.positionals.length) {
    process.stderr.write(`tma: ${parsed.verb} takes no arguments, got "${parsed.positionals.join(' ')}" (see \`tma help ${parsed.verb}\`)\n`);
    return 2;
  }
  if (parsed.globals.help || parsed.verb === null) {
    process.stdout.write(HELP);
    return parsed.verb === null && !parsed.globals.help ? 2 : 0;
  }
  const fleet = (parsed.globals.hub !== undefined || process.env.TMA_HUB) && parsed.verb !== 'collector' && parsed.verb !== 'hub';
  const main = (fleet && (await loadFleet(parsed.verb))) || (await load(parsed.verb));
  try {
    // A socket path of some host's tmux server only means something to a hub.
    if (!fleet && parsed.verb === 'act' && parsed.opts.server !== undefined) throw new UsageError('--server needs --hub');
    return await main(parsed);
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`tma: ${e.message}\n`);
      return 2;
    }
    // Every error a person can cause is one line; a stack trace only on request (TMA_DEBUG=1).
    // An ExitError (cli/local.ts, not imported here to keep start-up small) carries its exit code.
    const code = (e as { code?: unknown }).code;
    if (e instanceof Error && e.name === 'Error' && typeof code === 'number') {
      process.stderr.write(`tma: ${e.message}\n`);
      return code;
    }
    if (process.env.TMA_DEBUG) throw e;
    process.stderr.write(`tma: ${(e as Error).message ?? String(e)}\n`);
    return 1;
  }
}

export { GLOBAL_OPTS };
