// The tmux key bindings tma manages: one file of its own (rewritten whole) and a single marked
// `source-file` line in the user's tmux.conf (the only line of theirs we ever add or remove).

export const KEYS_MARKER = 'tma keybindings';
export const LINE_MARK = '# tma keys';

const q = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;

/** `bin` is the tma executable; the socket comes from the client's own server at key time. */
export function renderManaged(bin: string, mouse: boolean): string {
  const tma = (args: string) => `run-shell "${q(bin)} -S '#{socket_path}' ${args} --client '#{client_name}'"`;
  const lines = [
    `# ${KEYS_MARKER}: written by \`tma install-keys\`, removed by \`tma install-keys --uninstall\`.`,
    '# Rewritten whole on every install; keep your own bindings in your tmux.conf.',
    `bind-key a ${tma('jump --menu')}`,
    `bind-key j ${tma('jump --attention')}`,
    `bind-key g ${tma('jump --blocked')}`,
    `bind-key b ${tma('jump --back')}`,
    `bind-key h ${tma('jump --home')}`,
  ];
  if (mouse) {
    lines.push(
      "# Mouse: left click on the status bar's right side jumps to a blocked agent, right click opens the menu",
      '# (needs `set -g mouse on`).',
      `bind-key -n MouseDown1StatusRight ${tma('jump --blocked')}`,
      `bind-key -n MouseDown3StatusRight ${tma('jump --menu')}`,
    );
  }
  return `${lines.join('\n')}\n`;
}

export function sourceLine(managedPath: string | null): string {
  return managedPath === null
    ? `source-file -q "$XDG_CONFIG_HOME/tma/tmux.conf" "$HOME/.config/tma/tmux.conf" ${LINE_MARK}`
    : `source-file "${managedPath}" ${LINE_MARK}`;
}

const marked = (l: string) => l.startsWith('source-file ') && l.trimEnd().endsWith(LINE_MARK);

/** Drop every marked line and append the wanted one; unchanged when it is already the only one, last. */
export function planConfAdd(text: string, line: string): string {
  const lines = text === '' ? [] : text.replace(/\n$/, '').split('\n');
  const mine = lines.filter(marked);
  if (mine.length === 1 && mine[0] === line && text.endsWith('\n')) return text;
  return `${[...lines.filter((l) => !marked(l)), line].join('\n')}\n`;
}

export function planConfRemove(text: string): string {
  if (!text.split('\n').some(marked)) return text;
  return text
    .split('\n')
    .filter((l) => !marked(l))
    .join('\n');
}

/** Problems with the conf's marked line, none when exactly the wanted one is there. */
export function confLineProblems(text: string, line: string, conf: string): string[] {
  const mine = text.split('\n').filter(marked);
  if (mine.length === 0) return [`${conf} does not source tma's key file (no line ending in "${LINE_MARK}")`];
  if (mine.length > 1) return [`${conf} has ${mine.length} "${LINE_MARK}" lines; keep one`];
  if (mine[0] !== line) return [`${conf} sources a different tma key file: ${mine[0]}`];
  return [];
}
