// How a failed tmux call is classified. The collector treats a gone server as a clean end of
// the cycle ("no tmux server running"), everything else as a real failure.

export type TmuxErrorKind = 'server-gone' | 'failed' | 'timeout';

export class TmuxError extends Error {
  readonly kind: TmuxErrorKind;
  /** What tmux wrote on stderr (or the control-mode %error body), trimmed. */
  readonly stderr: string;

  constructor(kind: TmuxErrorKind, stderr: string, message?: string) {
    super(message ?? describe(kind, stderr));
    this.name = 'TmuxError';
    this.kind = kind;
    this.stderr = stderr;
  }
}

function describe(kind: TmuxErrorKind, stderr: string): string {
  switch (kind) {
    case 'server-gone':
      return 'no tmux server running';
    case 'timeout':
      return 'tmux did not answer in time';
    case 'failed':
      return stderr === '' ? 'tmux command failed' : `tmux: ${stderr}`;
  }
}

// The first three are what a client prints when it cannot reach a server (a missing socket file
// shows up as "error connecting to … (No such file or directory)"); the last two are what it prints
// when the server dies while the command is in flight.
const SERVER_GONE = ['no server running', 'error connecting', 'failed to connect to server', 'server exited unexpectedly', 'lost server'];

export function isServerGone(stderr: string): boolean {
  const s = stderr.toLowerCase();
  return SERVER_GONE.some((needle) => s.includes(needle));
}

export function classifyStderr(stderr: string): TmuxErrorKind {
  return isServerGone(stderr) ? 'server-gone' : 'failed';
}

export function errorFromStderr(stderr: string): TmuxError {
  const text = stderr.trim();
  return new TmuxError(classifyStderr(text), text);
}

const PANE_GONE = ["can't find pane", 'no such pane', 'pane not found'];

/** The pane vanished between listing and acting on it: skip it, it is not a failure. */
export function isPaneGone(stderr: string): boolean {
  const s = stderr.toLowerCase();
  return PANE_GONE.some((needle) => s.includes(needle));
}

/**
 * A client and server of different tmux builds cannot talk; surfaced separately because the fix
 * is TMA_TMUX_BIN / `[tmux] bin`, not restarting anything.
 */
export function isProtocolMismatch(stderr: string): boolean {
  return /protocol version mismatch|server version is too (old|new)/i.test(stderr);
}
