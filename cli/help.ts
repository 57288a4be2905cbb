// One usage paragraph per verb, with an example or two: `tma VERB --help` and `tma help VERB`.

export const VERB_HELP: Record<string, string> = {
  version: 'tma version\n  print the version',
  ls: 'tma ls [--json] [--pane ID] [selectors]\n  list agent panes and their states\n\n  tma ls --state blocked\n  tma ls --json --agent claude',
  status: 'tma status [--format tmux|plain|json|prom] [selectors]\n  counts for a status bar or a scraper\n\n  set -g status-right \'#(tma status)\'',
  doctor: 'tma doctor [--json] [--exit-code]\n  what is wrong with detection and setup on this server\n\n  tma doctor --exit-code',
  act: 'tma act NAME [--pane ID | selectors [--all]] [--dry-run] [--yes] [--force] [--json]\ntma act --list [--json] [--pane ID]\n  fire an action (approve, deny, …) at agent panes\n\n  tma act approve --pane %3\n  tma act --list --pane %3',
  mute: 'tma mute [--pane ID | selectors] [--for DURATION | --clear]\n  silence notifications (default: indefinitely)\n\n  tma mute --pane %3 --for 30m',
  collector: 'tma collector --hub URL --token-file F | --stdio [--host-name NAME] [--interval SECS]\n  publish every tmux server\'s agents to a hub\n  logs on stderr: readable on a terminal, JSON lines otherwise; --log-level LEVEL or TMA_LOG_LEVEL\n  (trace|debug|info|warn|error|fatal|silent, default info)\n\n  tma collector --hub ws://hub:7480 --token-file ~/.config/tma/collector.token',
  hub: 'tma hub [--listen ADDR:PORT] [--config hub.toml] [--no-local]\n  serve the fleet (default 127.0.0.1:7480); SIGHUP re-reads hub.toml\n  logs on stderr as for collector (--log-level LEVEL or TMA_LOG_LEVEL)\n' +
    'tma hub token --host NAME | --client NAME --role viewer|operator [--dir DIR] [--force] [--hub ws://HUB:PORT] [--print]\n' +
    '  write a new 0600 token file, add its entry to hub.toml (created on first use) and reload the running hub,\n' +
    '  then print the entry (and, for a host, the collector command); --print only prints\n\n' +
    '  tma hub --listen 0.0.0.0:7480\n  tma hub token --host gpu1 --hub ws://hub.lan:7480',
  wait: 'tma wait --until STATES [--pane ID|--any|--all|--count N] [--since MS] [--timeout SECS] [--json]\n  block until agents reach a state (exit 124 on timeout)\n\n  tma wait --until idle --pane %3 --timeout 600',
  subscribe: 'tma subscribe --json [--interval SECS] [--changes-only] [--events]\n  stream snapshots or state transitions, one JSON line each\n\n  tma subscribe --json --events',
  'install-hooks':
    'tma install-hooks AGENT | --all [--check] [--uninstall] [--yes] [path flags]\n' +
    '  wire an agent\'s hooks (claude gemini cursor opencode codex pi) to tma-hook; every change is shown\n' +
    '  as a diff and asked for first. Path flags: --settings --gemini-settings --codex-config --codex-hooks\n' +
    '  --cursor-hooks --opencode-plugin --pi-extension --config-dir --wrapper-path --wrapper-ref absolute|bare\n\n' +
    '  tma install-hooks claude\n  tma install-hooks --check',
  'install-keys':
    'tma install-keys [--mouse] [--check] [--uninstall] [--yes] [--conf PATH] [--config-dir DIR]\n' +
    '  tmux key bindings (prefix+j next waiting agent, g blocked, b back, h home, a menu) in a file of\n  their own, sourced by one line in your tmux.conf\n\n  tma install-keys --mouse',
  init: 'tma init [--yes] [--no-daemon] [--conf PATH] [--config-dir DIR]\n  wire every supported agent on $PATH, install the key bindings, then run doctor\n\n  tma init',
  jump:
    'tma jump [--attention | --blocked | --next | --back | --home | --pane ID | --menu] [--client NAME] [selectors]\n' +
    '  focus the agent that needs you; --back and --home walk back along this client\'s trail\n\n  tma jump --attention\n  tma jump --back',
  completions: 'tma completions bash|zsh|fish\n  a completion script on stdout\n\n  tma completions bash > ~/.local/share/bash-completion/completions/tma',
  help: 'tma help [VERB]\n  this help, or one verb\'s\n\n  tma help jump',
};

/** The verb closest to a mistyped one, when it is close enough to be a likely typo. */
export function closestVerb(word: string, verbs: string[]): string | null {
  let best: string | null = null;
  let bestD = Infinity;
  for (const v of verbs) {
    const d = distance(word, v) - (v.startsWith(word) ? 1 : 0);
    if (d < bestD) {
      best = v;
      bestD = d;
    }
  }
  return best !== null && bestD <= Math.max(2, Math.floor(word.length / 2)) ? best : null;
}

function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cur = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = cur;
    }
  }
  return row[b.length]!;
}
