// tmux's attention-clear hooks: navigating to a pane counts as having seen it. Pure planning over
// `show-hooks -g <hook>` output; the caller runs the commands. Entries are ours when they run
// `clear-attention` (whatever binary path), and current when they match the command this build
// would write once quoting is ignored (tmux re-quotes what it stores).

export const DESIRED_HOOKS = ['after-select-pane', 'session-window-changed'] as const;
export const FOCUS_HOOK = 'pane-focus-in';
export const RETIRED_HOOKS = ['after-select-window'] as const;
export const ALL_HOOKS = [...DESIRED_HOOKS, FOCUS_HOOK, ...RETIRED_HOOKS];

const KINDED = new Set<string>(DESIRED_HOOKS);

export function desiredHooks(focusEvents: boolean): string[] {
  return focusEvents ? [...DESIRED_HOOKS, FOCUS_HOOK] : [...DESIRED_HOOKS];
}

/** The run-shell line for a hook; `bin` is the tma executable, with a $PATH fallback. */
export function clearCommand(hook: string, bin: string): string {
  const kind = KINDED.has(hook) ? `TMA_HOOK_KIND=${hook} ` : '';
  return (
    `run-shell "if [ -x '${bin}' ]; then ${kind}'${bin}' clear-attention '#{pane_id}' 2>/dev/null || true; ` +
    `else ${kind}tma clear-attention '#{pane_id}' 2>/dev/null || true; fi"`
  );
}

export interface HookEntry {
  index: number;
  command: string;
}

export function parseShowHooks(output: string, hook: string): HookEntry[] {
  const out: HookEntry[] = [];
  for (const line of output.split('\n')) {
    const m = /^(\S+?)(?:\[(\d+)\])?(?: (.*))?$/.exec(line);
    if (!m || m[1] !== hook || m[3] === undefined) continue;
    out.push({ index: m[2] ? Number(m[2]) : 0, command: m[3] });
  }
  return out;
}

export const isOurHook = (command: string) => command.includes('clear-attention');
const squash = (s: string) => s.replace(/[\s"'\\]/g, '');
export const isCurrentHook = (command: string, wanted: string) => squash(command) === squash(wanted);

/** The tmux command that brings one hook up to date, or null when it already is. */
export function planHookInstall(hook: string, entries: HookEntry[], wanted: string): string[] | null {
  const ours = entries.find((e) => isOurHook(e.command));
  if (!ours) return ['set-hook', '-ga', hook, wanted];
  if (!isCurrentHook(ours.command, wanted)) return ['set-hook', '-g', `${hook}[${ours.index}]`, wanted];
  return null;
}

/** Unset commands for our entries, highest index first so the others keep their places. */
export function planHookRemoval(hook: string, entries: HookEntry[], recorded: number[] | null): string[][] {
  const ours = entries.filter((e) => isOurHook(e.command) && (recorded === null || recorded.includes(e.index)));
  return ours.sort((a, b) => b.index - a.index).map((e) => ['set-hook', '-gu', `${hook}[${e.index}]`]);
}

export type HookState = 'present' | 'drifted' | 'wiped' | 'missing';

export function hookState(entries: HookEntry[], wanted: string, recordedIndex: number | null): HookState {
  const ours = entries.filter((e) => isOurHook(e.command));
  const at = recordedIndex !== null ? (ours.find((e) => e.index === recordedIndex) ?? ours[0]) : ours[0];
  if (at) return isCurrentHook(at.command, wanted) ? 'present' : 'drifted';
  return recordedIndex !== null ? 'wiped' : 'missing';
}

export function hookReason(hook: string, state: HookState): string | null {
  switch (state) {
    case 'present':
      return null;
    case 'drifted':
      return `tmux hook ${hook} is stale (it names another tma); run \`tma install-hooks AGENT\` to repoint it`;
    case 'wiped':
      return (
        `tmux hook ${hook} was installed but is not on this server (likely restarted); run \`tma install-hooks AGENT\` ` +
        'again, or add the `set-hook -ga` lines to ~/.tmux.conf'
      );
    case 'missing':
      return `tmux hook ${hook} missing (a config reload, or an upgrade that renamed it)`;
  }
}

const STATE_HEADER =
  '# Written by `tma install-hooks`: where tma put its tmux hooks on one server,\n# so uninstall removes exactly those. Safe to delete; the next install rewrites it.\n# One [[tmux_hooks]] table per hook.\n';

export function renderHookRecord(rec: { hook: string; index: number }[]): string {
  return STATE_HEADER + rec.map((r) => `\n[[tmux_hooks]]\nhook = ${JSON.stringify(r.hook)}\nindex = ${r.index}\n`).join('');
}
