// Which tmux server a command talks to, and which tmux binary talks to it.

export type ServerTarget = { kind: 'name'; name: string } | { kind: 'path'; path: string } | { kind: 'default' };

type Env = Readonly<Record<string, string | undefined>>;

/** Both --socket-name and --socket-path were given; callers map this to exit code 2. */
export class TargetConflictError extends Error {
  readonly exitCode = 2;
  constructor() {
    super('--socket-name and --socket-path cannot be used together');
    this.name = 'TargetConflictError';
  }
}

export interface TargetFlags {
  socketName?: string | undefined;
  socketPath?: string | undefined;
  env: Env;
}

/**
 * Flags win over the environment; TMA_SOCKET_PATH counts only when no flag was given. An empty
 * value counts as absent, so `--socket-path ""` from a wrapper script does not mean "socket ''".
 */
export function resolveTarget({ socketName, socketPath, env }: TargetFlags): ServerTarget {
  const name = nonEmpty(socketName);
  const path = nonEmpty(socketPath);
  if (name !== null && path !== null) throw new TargetConflictError();
  if (name !== null) return { kind: 'name', name };
  if (path !== null) return { kind: 'path', path };
  const fromEnv = nonEmpty(env['TMA_SOCKET_PATH']);
  if (fromEnv !== null) return { kind: 'path', path: fromEnv };
  // Left to tmux itself: $TMUX when inside tmux, else the default socket.
  return { kind: 'default' };
}

/** TMA_TMUX_BIN > `[tmux] bin` from the config > `tmux` on PATH. */
export function tmuxBin(env: Env, configBin?: string | null): string {
  return nonEmpty(env['TMA_TMUX_BIN']) ?? nonEmpty(configBin ?? undefined) ?? 'tmux';
}

/**
 * Arguments placed before every tmux command. `-u` is always there: without it a client whose
 * locale is not UTF-8 turns the U+001F field separator of list-panes into `_`.
 */
export function globalArgs(target: ServerTarget): string[] {
  switch (target.kind) {
    case 'name':
      return ['-u', '-L', target.name];
    case 'path':
      return ['-u', '-S', target.path];
    case 'default':
      return ['-u'];
  }
}

/** The same server, spelled as tma flags, for children tma spawns (daemon, actions). */
export function targetFlags(target: ServerTarget): string[] {
  switch (target.kind) {
    case 'name':
      return ['--socket-name', target.name];
    case 'path':
      return ['--socket-path', target.path];
    case 'default':
      return [];
  }
}

function nonEmpty(v: string | undefined): string | null {
  return v === undefined || v === '' ? null : v;
}
