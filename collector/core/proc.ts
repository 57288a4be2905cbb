// The process table as the identity step sees it, and the few questions asked of it.
// Reading `ps` is someone else's job; everything here works on rows already parsed.

export interface ProcEntry {
  pid: number;
  ppid: number;
  pgid: number;
  /** Foreground process group of the controlling terminal; null when ps reports none (0 / -1). */
  tpgid: number | null;
  comm: string;
}

// macOS truncates comm, so a nix wrapper may arrive as `.opencode-wrapp`; every non-empty prefix
// of the suffix has to be accepted. Longest first so the widest strip wins.
const WRAPPED = '-wrapped';
const WRAPPED_SUFFIXES: readonly string[] = Array.from({ length: WRAPPED.length }, (_, i) => WRAPPED.slice(0, WRAPPED.length - i));

/**
 * The program name a comm or pane_current_command stands for: first word, basename, and the nix
 * `.name-wrapped` shim peeled off. A shim with nothing inside it stays as it was.
 */
export function normalizeComm(s: string): string {
  const word = s.trim().split(/\s+/)[0] ?? '';
  const base = word.slice(word.lastIndexOf('/') + 1);
  if (!base.startsWith('.')) return base;
  for (const suffix of WRAPPED_SUFFIXES) {
    if (base.length > suffix.length && base.endsWith(suffix)) {
      const inner = base.slice(1, base.length - suffix.length);
      return inner === '' ? base : inner;
    }
  }
  return base;
}

/**
 * The pane's process tree: the root (if it is still in the table) and everything descending from
 * it through ppid. The visited set matters: pid 0 is its own parent on some systems.
 */
export function subtree(procs: readonly ProcEntry[], rootPid: number): ProcEntry[] {
  const byPid = new Map<number, ProcEntry>();
  const children = new Map<number, ProcEntry[]>();
  for (const p of procs) {
    if (byPid.has(p.pid)) continue;
    byPid.set(p.pid, p);
    const list = children.get(p.ppid);
    if (list) list.push(p);
    else children.set(p.ppid, [p]);
  }
  const out: ProcEntry[] = [];
  const seen = new Set<number>([rootPid]);
  const root = byPid.get(rootPid);
  if (root) out.push(root);
  const stack: number[] = [rootPid];
  while (stack.length > 0) {
    const pid = stack.pop() as number;
    for (const child of children.get(pid) ?? []) {
      if (seen.has(child.pid)) continue;
      seen.add(child.pid);
      out.push(child);
      stack.push(child.pid);
    }
  }
  return out;
}

/** Programs whose presence alone means "nobody is running an agent here". */
export const SHELLS: readonly string[] = ['sh', 'bash', 'zsh', 'fish', 'dash', 'ksh', 'mksh', 'tcsh', 'csh', 'ash', 'login'];

/** Login shells show up as `-bash`; one leading dash is the convention, so one is removed. */
export function shellName(comm: string): string {
  const name = normalizeComm(comm);
  return name.startsWith('-') ? name.slice(1) : name;
}

/**
 * True when the given processes (a pane subtree) are only shells. An empty list qualifies: a pane
 * whose root vanished has nothing left that could be the agent.
 */
export function isShellOnly(procs: readonly ProcEntry[]): boolean {
  return procs.every((p) => SHELLS.includes(shellName(p.comm)));
}
