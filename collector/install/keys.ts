// The tmux key bindings tma manages: one file of its own (rewritten whole) and a single marked
// `source-file` line in the user's tmux.conf (the only line of theirs we ever add or remove).

export const KEYS_MARKER = 'tma keybindings';
export const LINE_MARK = '# tma keys';

const q = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;

/** What each of tma's prefix keys does, in the order they are written and asked about. */
export const BINDINGS = ['picker', 'watch', 'menu', 'attention', 'blocked', 'back', 'home'] as const;
export type Binding = (typeof BINDINGS)[number];
/** The key each binding takes (null: left unbound because the person's own key is there). */
export type KeyMap = Record<Binding, string | null>;

export const DEFAULT_KEYS: KeyMap = { picker: 'a', watch: 'G', menu: 'A', attention: 'j', blocked: 'g', back: 'b', home: 'h' };

export const BINDING_WORDS: Record<Binding, string> = {
  picker: 'the picker (a popup)',
  watch: 'the watch window',
  menu: 'the act menu',
  attention: 'jump to the agent waiting longest',
  blocked: 'jump to the oldest blocked agent',
  back: 'jump back',
  home: 'jump home',
};

const KEYS_LINE = '# keys:';

/** `bin` is the tma executable; the socket comes from the client's own server at key time. */
export function renderManaged(bin: string, mouse: boolean, keys: KeyMap = DEFAULT_KEYS): string {
  const tma = (args: string) => `run-shell "${q(bin)} -S '#{socket_path}' ${args} --client '#{client_name}'"`;
  // A popup and a new window run inside tmux: $TMUX names their server, so no socket flag is needed.
  const commands: Record<Binding, string> = {
    picker: `display-popup -E -w 80% -h 60% "${q(bin)}"`,
    watch: `new-window -n tma "${q(bin)} watch --table"`,
    menu: `run-shell "${q(bin)} -S '#{socket_path}' act --menu --pane '#{pane_id}'"`,
    attention: tma('jump --attention'),
    blocked: tma('jump --blocked'),
    back: tma('jump --back'),
    home: tma('jump --home'),
  };
  const lines = [
    `# ${KEYS_MARKER}: written by \`tma install-keys\`, removed by \`tma install-keys --uninstall\`.`,
    '# Rewritten whole on every install; keep your own bindings in your tmux.conf.',
    `${KEYS_LINE} ${BINDINGS.map((b) => `${b}=${keys[b] ?? '-'}`).join(' ')}`,
  ];
  for (const b of BINDINGS) {
    const k = keys[b];
    if (k === null) lines.push(`# prefix key for ${b} left unbound: your own binding is kept`);
    else lines.push(`bind-key ${k} ${commands[b]}`);
  }
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

/** The key map a managed file was written with; null when it has none (an older file). */
export function keyMapOf(managed: string): KeyMap | null {
  const line = managed.split('\n').find((l) => l.startsWith(KEYS_LINE));
  if (!line) return null;
  const map = { ...DEFAULT_KEYS };
  for (const pair of line.slice(KEYS_LINE.length).trim().split(/\s+/)) {
    const [name, key] = pair.split('=');
    if (!(BINDINGS as readonly string[]).includes(name ?? '') || !key) return null;
    map[name as Binding] = key === '-' ? null : key;
  }
  return map;
}

/** A key someone else holds in the prefix table, and where we saw it. */
export interface TakenKey {
  key: string;
  command: string;
  where: string;
}

const TAKES_ARG = new Set(['-T', '-N']);

/** The table, key and command of one `bind-key` line (tmux.conf or `list-keys` output); null otherwise. */
export function parseBind(line: string): { table: string; key: string; command: string } | null {
  const t = line.trim();
  const m = /^(bind-key|bind)\s+(.*)$/.exec(t);
  if (!m) return null;
  const words = m[2]!.split(/\s+/);
  let table = 'prefix';
  let i = 0;
  while (i < words.length && /^-[A-Za-z]+$/.test(words[i]!)) {
    const w = words[i]!;
    if (TAKES_ARG.has(w)) {
      if (w === '-T') table = words[i + 1] ?? table;
      i += 2;
      continue;
    }
    if (w.includes('n')) table = 'root';
    i += 1;
  }
  const raw = words[i];
  if (raw === undefined) return null;
  // list-keys writes some keys escaped (\# \;); a conf may quote them.
  const key = raw.replace(/^\\/, '').replace(/^(['"])(.*)\1$/, '$2');
  return { table, key, command: words.slice(i + 1).join(' ') };
}

/** Prefix keys bound in a tmux.conf's own lines. */
export function confBindings(text: string, conf: string): TakenKey[] {
  const out: TakenKey[] = [];
  text.split('\n').forEach((line, n) => {
    const b = parseBind(line.replace(/\s+#.*$/, ''));
    if (b && b.table === 'prefix') out.push({ key: b.key, command: b.command, where: `${conf} line ${n + 1}` });
  });
  return out;
}

/** Prefix keys a running server has bound, except tma's own (their command runs `bin`). */
export function serverBindings(listKeys: string, bin: string): TakenKey[] {
  const out: TakenKey[] = [];
  for (const line of listKeys.split('\n')) {
    const b = parseBind(line);
    if (b && b.table === 'prefix' && !b.command.includes(bin)) out.push({ key: b.key, command: b.command, where: 'the running tmux server' });
  }
  return out;
}

/** Keys worth offering instead of a taken one: the other case, then with Meta. */
export function alternatives(key: string): string[] {
  const other = key.toLowerCase() === key ? key.toUpperCase() : key.toLowerCase();
  return [...(other !== key ? [other] : []), `M-${key}`];
}

export interface KeyConflict {
  binding: Binding;
  taken: TakenKey;
  /** A free key to use instead, or null when none of the alternatives is free. */
  offer: string | null;
}

/** Which of tma's keys someone else holds, each with a free key to offer instead. */
export function planKeys(want: KeyMap, taken: readonly TakenKey[]): { keys: KeyMap; conflicts: KeyConflict[] } {
  const holder = new Map<string, TakenKey>();
  for (const t of taken) if (!holder.has(t.key)) holder.set(t.key, t);
  const keys = { ...want };
  const conflicts: KeyConflict[] = [];
  const used = () => new Set(Object.values(keys).filter((k): k is string => k !== null));
  for (const b of BINDINGS) {
    const k = want[b];
    if (k === null) continue;
    const t = holder.get(k);
    if (!t) continue;
    const inUse = used();
    const offer = alternatives(k).find((a) => !holder.has(a) && !inUse.has(a)) ?? null;
    keys[b] = null;
    conflicts.push({ binding: b, taken: t, offer });
  }
  return { keys, conflicts };
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
