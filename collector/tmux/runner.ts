// The one interface the collector uses to talk to tmux, whichever transport is underneath.

import type { ServerTarget } from './target.js';
import { SpawnRunner } from './spawn-runner.js';

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

export interface OpenRunnerOptions {
  mode: 'spawn' | 'control';
  bin: string;
  /** Environment of the tmux processes; defaults to this process's. */
  env?: Env;
  /** Control mode only: also deliver %output notifications (off: agents paint a lot). */
  output?: boolean;
}

/**
 * A control runner is returned even when it cannot attach right now (no server, or a server with
 * no session): it then answers through one-shot processes and attaches once it can.
 */
export async function openRunner(target: ServerTarget, opts: OpenRunnerOptions): Promise<TmuxRunner> {
  const base = { target, bin: opts.bin, env: opts.env ?? process.env };
  if (opts.mode === 'spawn') return new SpawnRunner(base);
  // Loaded only here: one-shot verbs (status, ls, event) spawn, and need none of it.
  const { ControlRunner } = await import('./control-runner.js');
  const runner = new ControlRunner({ ...base, output: opts.output ?? false });
  await runner.connect();
  return runner;
}
