// Every verb of `tma`, one entry each (VerbEntry in cli/args.ts says what an entry holds): adding a verb
// is adding its entry here, and its flags to cli/verb-flags.ts when it has any. The order is
// `tma help`'s, section by section. Code loads only when its verb runs: one-shot verbs such as
// `status` run every second from status bars, so parsing and help import no verb.

import { flagsByVerb, UsageError, verb, type Parsed } from './args.js';
import * as F from './verb-flags.js';
import { VERSION } from './version.js';

export const VERB_TABLE = {
  ls: verb({
    flags: F.LS,
    usage: ['tma ls [--json | --tsv] [--pane ID] [selectors]'],
    help:
      '  list agent panes and their states: a table on a terminal, tab-separated columns when piped\n' +
      '  (--tsv forces them)\n\n  tma ls --state blocked\n  tma ls --json --agent claude',
    overview: [['ls [--json] [--pane ID] [selectors]', 'list agent panes and their states']],
    section: 'commands',
    positionals: false,
    load: async () => (await import('./verbs/ls.js')).main,
    fleet: async () => (await import('./fleet/read-verbs.js')).ls,
  }),
  status: verb({
    flags: F.STATUS,
    usage: ['tma status [--format tmux|plain|json|prom] [selectors]'],
    help: "  counts for a status bar or a scraper\n\n  set -g status-right '#(tma status)'",
    overview: [['status [--format tmux|plain|json|prom]', 'counts for a status bar or a scraper']],
    section: 'commands',
    positionals: false,
    load: async () => (await import('./verbs/status.js')).main,
    fleet: async () => (await import('./fleet/read-verbs.js')).status,
  }),
  wait: verb({
    flags: F.WAIT,
    usage: ['tma wait --until STATES [--pane ID|--any|--all|--count N] [--since MS] [--timeout SECS] [--json]'],
    help: '  block until agents reach a state (exit 124 on timeout)\n\n  tma wait --until idle --pane %3 --timeout 600',
    overview: [
      [
        'wait --until STATES [--pane ID|--any|--all|--count N] [--since MS] [--timeout SECS] [--json]',
        'block until agents reach a state (exit 124 on timeout)',
      ],
    ],
    section: 'commands',
    positionals: false,
    load: async () => (await import('./verbs/wait.js')).main,
    fleet: async () => (await import('./fleet/read-verbs.js')).wait,
  }),
  subscribe: verb({
    flags: F.SUBSCRIBE,
    usage: ['tma subscribe [--json [--changes-only] [--events]] [--interval SECS]'],
    help:
      '  stream state changes as readable lines; with --json, snapshots or (--events) transitions, one JSON line each\n\n' +
      '  tma subscribe\n  tma subscribe --json --events',
    overview: [['subscribe [--json [--changes-only] [--events]] [--interval SECS]', 'stream state changes (readable, or JSON lines)']],
    section: 'commands',
    positionals: false,
    load: async () => (await import('./verbs/subscribe.js')).main,
    fleet: async () => (await import('./fleet/read-verbs.js')).subscribe,
  }),
  doctor: verb({
    flags: F.DOCTOR,
    usage: ['tma doctor [--json] [--exit-code]'],
    help:
      '  what is wrong with detection and setup on this server; with --hub, each host: link, last refusal,\n' +
      '  clock offset, collector version, failed notifications\n\n  tma doctor --exit-code\n  tma --hub http://hub:7480 doctor',
    overview: [['doctor [--json] [--exit-code]', 'what is wrong with detection on this server']],
    section: 'commands',
    positionals: false,
    load: async () => (await import('./verbs/doctor.js')).main,
    fleet: async () => (await import('./fleet/doctor-verb.js')).main,
  }),
  act: verb({
    flags: F.ACT,
    usage: [
      'tma act NAME [--pane ID | selectors [--all]] [--dry-run] [--yes] [--force] [--json]',
      'tma act --list [--json] [--pane ID]',
      'tma act --menu [--pane ID]',
      'tma --hub URL act --menu --host H --pane ID',
    ],
    help: '  fire an action (approve, deny, …) at agent panes\n\n  tma act approve --pane %3\n  tma act --list --pane %3',
    overview: [
      [
        'act NAME [--pane ID | selectors [--all]] [--dry-run] [--yes] [--force] [--json]\n' +
          '    [--slot KEY] [--expect-episode-ms MS] [--expect-permission-request ID] [--arg V]...\n    [--expect-prompt ID] [--again]',
        'fire an action (approve, deny, …) at agent panes',
      ],
      ['act --list [--json] [--pane ID]', 'the actions, and which would fire on a pane'],
      ['act --menu [--pane ID]', 'a menu of the actions that would fire on a pane, and why the others would not'],
    ],
    section: 'commands',
    positionals: { words: ['approve', 'deny', 'interrupt', 'compact'] },
    // `--menu` has a file of its own (cli/verbs/act-menu.ts); every other form is act.ts's.
    load: async () => {
      const fire = (await import('./verbs/act.js')).main;
      return async (p: Parsed<typeof F.ACT>) => (p.opts.menu === true ? (await import('./verbs/act-menu.js')).main(p) : fire(p));
    },
    fleet: async () => {
      const fire = (await import('./fleet/act-verb.js')).main;
      return async (p: Parsed<typeof F.ACT>) => (p.opts.menu === true ? (await import('./verbs/act-menu.js')).fleetMain(p) : fire(p));
    },
  }),
  watch: verb({
    flags: F.WATCH,
    usage: ['tma watch [--table] [selectors]', 'tma --hub URL watch [--table] [selectors]'],
    help:
      '  a live dashboard for a tmux pane or window: blocked first, what is asked, a preview of the selected pane;\n' +
      '  a approve, d deny (each asks y first), enter jump, / filter, 1-5 one state, q quit; with --hub the fleet\n\n' +
      "  tmux new-window 'tma watch --table'\n  tma --hub http://hub:7480 watch",
    overview: [['watch [--table] [selectors]', 'a live dashboard: approve, deny, jump (with --hub: the fleet)']],
    section: 'commands',
    positionals: false,
    load: async () => (await import('./verbs/watch.js')).main,
    fleet: async () => (await import('./verbs/watch.js')).main,
  }),
  // Bare `tma` on a terminal runs this verb too (cli/main.ts).
  pick: verb({
    flags: F.WATCH,
    usage: ['tma [pick [QUERY]] [selectors]'],
    help: '  the picker (also bare `tma` on a terminal): type to filter, enter jumps, tab opens the action menu, esc cancels\n\n  tma pick claude',
    overview: [['pick [QUERY] (bare `tma` on a terminal)', 'the picker: type to filter, enter jumps, tab acts']],
    section: 'commands',
    positionals: {},
    load: async () => (await import('./verbs/pick.js')).main,
    fleet: async () => (await import('./verbs/pick.js')).main,
  }),
  mute: verb({
    flags: F.MUTE,
    usage: ['tma mute [--pane ID | selectors] [--for DURATION | --clear]', 'tma --hub URL mute --host H --pane ID [--server S] [--for DURATION | --clear]'],
    help: '  silence notifications (default: indefinitely)\n\n  tma mute --pane %3 --for 30m\n  tma --hub http://hub:7480 mute --host build1 --pane %4 --for 1h',
    overview: [['mute [--pane ID | selectors] [--for DURATION | --clear]', 'silence notifications (default: indefinitely)']],
    section: 'commands',
    positionals: false,
    load: async () => (await import('./verbs/mute.js')).main,
    fleet: async () => (await import('./fleet/mute-verb.js')).main,
  }),
  collector: verb({
    flags: F.COLLECTOR,
    usage: ['tma collector --hub URL --token-file F | --stdio [--host-name NAME] [--interval SECS]'],
    help:
      "  publish every tmux server's agents to a hub\n  logs on stderr: readable on a terminal, JSON lines otherwise; --log-level LEVEL or TMA_LOG_LEVEL\n" +
      '  (trace|debug|info|warn|error|fatal|silent, default info)\n  --hub A,B,…: several hubs, tried in order; the next one when a link fails or is refused\n\n' +
      '  tma collector --hub ws://hub:7480 --token-file ~/.config/tma/collector.token',
    overview: [['collector --hub URL --token-file F | --stdio [--host-name NAME] [--interval SECS]', "publish every tmux server's agents to a hub"]],
    section: 'commands',
    positionals: false,
    load: async () => (await import('./verbs/collector.js')).main,
  }),
  hub: verb({
    flags: F.HUB,
    usage: ['tma hub [--listen ADDR:PORT] [--config hub.toml] [--no-local] [--nats nats://HOST:PORT[,…]]'],
    help:
      '  serve the fleet (default 127.0.0.1:7480); SIGHUP re-reads hub.toml\n  --nats: keep the fleet in NATS JetStream, shared by every hub given the same NATS\n  logs on stderr as for collector (--log-level LEVEL or TMA_LOG_LEVEL)\n' +
      'tma hub token --host NAME | --client NAME --role viewer|operator [--dir DIR] [--force] [--hub ws://HUB:PORT] [--print]\n' +
      '  write a new 0600 token file, add its entry to hub.toml (created on first use) and reload the running hub,\n' +
      '  then print the entry (and, for a host, the collector command); --print only prints\n' +
      'tma hub add-host NAME [--ttl 15m]\n' +
      '  a host token plus a one-time enrolment code: prints one line to paste on the new host, which\n' +
      '  fetches the collector from this hub over its pinned TLS, writes the token and starts a systemd user unit\n' +
      'tma hub tls [--name HOST[,HOST...]] [--force]\n' +
      '  a self-signed certificate and key (0600) for those names and addresses, [tls] added to hub.toml:\n' +
      '  HTTPS and wss:// on the same port; prints its SHA-256 (collectors: --hub-ca FILE or --hub-fingerprint SHA256)\n' +
      'tma hub tls --show\n' +
      '  the certificate hub.toml serves: its names, expiry, SHA-256 and the commands that trust it\n' +
      'tma hub pair [--role viewer|operator] [--name NAME] [--ttl 10m]\n' +
      '  a client token for one device, added to hub.toml; prints the page link and its QR code\n' +
      'tma hub clients [--json] | tma hub revoke NAME\n' +
      '  the client tokens with when each was last seen; remove one (its streams end)\n\n' +
      '  tma hub --listen 0.0.0.0:7480\n  tma hub token --host gpu1 --hub ws://hub.lan:7480',
    overview: [
      [
        'hub [--listen ADDR:PORT] [--config hub.toml] [--no-local]',
        "serve the fleet (default 127.0.0.1:7480), with this\nmachine's own agents unless --no-local",
      ],
      [
        'hub token --host NAME | --client NAME --role viewer|operator [--dir DIR] [--force] [--print]',
        'mint a 0600 token file, add it to hub.toml\nand reload the hub (--print only prints)',
      ],
      ['hub add-host NAME [--ttl 15m]', 'enrol a new host with one line pasted there'],
      ['hub tls [--name HOST[,HOST...]] [--force] | hub tls --show', 'a self-signed certificate for the hub:\nHTTPS and wss:// on the same port'],
      ['hub pair [--role viewer|operator] [--name NAME] [--ttl 10m]', 'pair a device: page link and QR code'],
      ['hub clients [--json] | hub revoke NAME', 'paired devices, last seen; unpair one'],
    ],
    section: 'commands',
    positionals: { words: ['token', 'add-host', 'tls', 'pair', 'clients', 'revoke'] },
    load: async () => (await import('./verbs/hub.js')).main,
  }),
  forget: verb({
    flags: F.NONE,
    usage: ['tma --hub URL forget HOST'],
    help: '  drop a host that is gone, and its rows, from the hub (an operator token)\n\n  tma --hub http://hub.lan:7480 forget gpu1',
    overview: [['forget HOST (with --hub)', 'drop a host that is gone, and its rows (operator token)']],
    section: 'other',
    positionals: {},
    load: async () => async () => {
      throw new UsageError('forget works on a hub: tma --hub URL forget HOST');
    },
    fleet: async () => (await import('./fleet/forget-verb.js')).main,
  }),
  version: verb({
    flags: F.NONE,
    usage: ['tma version'],
    help: '  print the version',
    overview: [['version', 'print the version']],
    section: 'other',
    positionals: false,
    load: async () => async () => {
      process.stdout.write(`tma ${VERSION}\n`);
      return 0;
    },
  }),
  debug: verb({
    flags: F.DEBUG,
    usage: ['tma debug notify-test --trigger blocked|done|context_high', 'tma debug transitions [--json]'],
    help: '  fire a sample notification through [notify], or show the last state changes the running collector saw\n\n  tma debug notify-test --trigger done',
    overview: [
      ['debug notify-test --trigger blocked|done|context_high', 'fire a sample notification through [notify]'],
      ['debug transitions [--json]', 'the last state changes the running collector saw'],
    ],
    section: 'other',
    positionals: { words: ['notify-test', 'transitions'] },
    load: async () => (await import('./verbs/debug.js')).main,
  }),
  init: verb({
    flags: F.INIT,
    usage: ['tma init [--yes] [--no-daemon] [--conf PATH] [--config-dir DIR]'],
    help: '  wire every supported agent on $PATH, install the key bindings, then run doctor\n\n  tma init',
    overview: [['init [--yes]', 'wire the agents on $PATH, install keys, run doctor']],
    section: 'setup',
    positionals: false,
    load: async () => (await import('./verbs/init.js')).main,
  }),
  'install-hooks': verb({
    flags: F.INSTALL_HOOKS,
    usage: ['tma install-hooks AGENT | --all [--check] [--uninstall] [--yes] [path flags]'],
    help:
      "  wire an agent's hooks (claude gemini cursor opencode codex pi) to tma-hook; every change is shown\n" +
      '  as a diff and asked for first. Path flags: --settings --gemini-settings --codex-config --codex-hooks\n' +
      '  --cursor-hooks --opencode-plugin --pi-extension --config-dir --wrapper-path --wrapper-ref absolute|bare\n\n' +
      '  tma install-hooks claude\n  tma install-hooks --check',
    overview: [['install-hooks AGENT|--all [--check] [--uninstall] [--yes]', "wire an agent's hooks (shows a diff, asks first)"]],
    section: 'setup',
    positionals: { words: ['claude', 'gemini', 'cursor', 'opencode', 'codex', 'pi'] },
    load: async () => (await import('./verbs/install-hooks.js')).main,
  }),
  'install-keys': verb({
    flags: F.INSTALL_KEYS,
    usage: ['tma install-keys [--mouse] [--check] [--uninstall] [--yes] [--conf PATH] [--config-dir DIR]'],
    help:
      '  tmux key bindings (prefix+a picker, G watch, A act menu, j next waiting agent, g blocked, b back, h home)\n' +
      '  in a file of their own, sourced by one line in your tmux.conf; a key you bound yourself is kept and named,\n' +
      '  and a free one offered instead (taken with --yes)\n\n  tma install-keys --mouse',
    overview: [['install-keys [--mouse] [--check] [--uninstall] [--yes]', 'tmux key bindings: picker, watch, act menu, jump']],
    section: 'setup',
    positionals: false,
    load: async () => (await import('./verbs/install-keys.js')).main,
  }),
  jump: verb({
    flags: F.JUMP,
    usage: [
      'tma jump [--attention | --blocked | --next | --back | --home | --pane ID | --menu [--menu-timeout SECS]] [--client NAME] [selectors]',
      'tma --hub URL jump --host H --pane ID [--server S]',
    ],
    help:
      "  focus the agent that needs you; --back and --home walk back along this client's trail\n" +
      '  with --hub: a new tmux window running ssh to the host, attached to that pane\n' +
      '  (ssh destination: [hosts.NAME] ssh = "user@host" in config.toml, else the hub\'s [[ssh]] entry)\n\n' +
      '  tma jump --attention\n  tma jump --back\n  tma --hub http://hub:7480 jump --host build1 --pane %4\n\n' +
      '  --menu closes itself after --menu-timeout seconds with nothing chosen (default 60)',
    overview: [['jump [--attention|--blocked|--next|--back|--home|--pane ID|--menu]', 'focus the agent that needs you, and back']],
    section: 'setup',
    positionals: false,
    load: async () => (await import('./verbs/jump.js')).main,
    fleet: async () => (await import('./fleet/jump-verb.js')).main,
  }),
  completions: verb({
    flags: F.NONE,
    usage: ['tma completions bash|zsh|fish'],
    help: '  a completion script on stdout\n\n  tma completions bash > ~/.local/share/bash-completion/completions/tma',
    overview: [['completions bash|zsh|fish', 'shell completion script']],
    section: 'setup',
    positionals: { words: ['bash', 'zsh', 'fish'] },
    load: async () => (await import('./verbs/completions.js')).main,
  }),
  help: verb({
    flags: F.NONE,
    usage: ['tma help [VERB]'],
    help: "  this help, or one verb's\n\n  tma help jump",
    overview: [['help [COMMAND]', "one command's usage and examples"]],
    section: 'setup',
    positionals: {},
    load: async () => (await import('./verbs/help.js')).main,
  }),
  // Run by agents' hooks and the act broker, not by people.
  event: verb({
    flags: F.EVENT,
    usage: ['tma event --agent NAME --kind KIND [--pane ID] [--payload JSON]'],
    help: "  stamp an agent's hook event on its pane (agents' hooks run it; it never fails them)",
    overview: [],
    section: 'hidden',
    positionals: {},
    load: async () => (await import('./verbs/event.js')).main,
  }),
  'clear-attention': verb({
    flags: F.NONE,
    usage: ['tma clear-attention PANE'],
    help: '  count a pane as seen: tmux navigation hooks run it on arriving at a pane (and leaving one)',
    overview: [],
    section: 'hidden',
    positionals: {},
    load: async () => (await import('./verbs/clear-attention.js')).main,
  }),
  supervise: verb({
    flags: F.SUPERVISE,
    usage: ['tma supervise --pane P --name N --nonce X --timeout-ms T -- COMMAND'],
    help: "  hold an exec action's lock for the command's life and end it at the deadline (the act broker runs it)",
    overview: [],
    section: 'hidden',
    positionals: {},
    load: async () => (await import('./verbs/act.js')).superviseMain,
  }),
};

export type VerbName = keyof typeof VERB_TABLE;

/** Each verb's flags, as the parser takes them. */
export const VERB_FLAGS = flagsByVerb(VERB_TABLE) as { [V in VerbName]: (typeof VERB_TABLE)[V]['flags'] };
