// What every tmux transport answers to. Kept apart from `openRunner` (runner.ts), which picks a
// transport: the transports implement this interface, and importing it from the file that
// imports them would close an import circle.

export const DEFAULT_TIMEOUT_MS = 3000;

export interface RunOptions {
  /** Default 3000 ms (every tmux read in the poll cycle has this bound). */
  timeoutMs?: number;
  /** Written to the command's stdin (e.g. `load-buffer -`); forces a one-shot process. */
  input?: string;
}

export interface TmuxRunner {
  readonly mode: 'spawn' | 'control';
  /** Run one command, or a chain with bare `;` tokens; resolves with all stdout, in order. */
  run(argv: string[], opts?: RunOptions): Promise<string>;
  /** Run commands as one chain (atomic for other clients); resolves with each one's output. */
  runChain(cmds: string[][], opts?: RunOptions): Promise<string[]>;
  close(): void;
}

export type Env = Readonly<Record<string, string | undefined>>;
