// Opening a connection to one tmux server: the one interface the collector uses to talk to tmux
// (runner-types.ts), whichever transport is underneath.

import type { Env, TmuxRunner } from './runner-types.js';
import { SpawnRunner } from './spawn-runner.js';
import type { ServerTarget } from './target.js';

export { DEFAULT_TIMEOUT_MS, type Env, type RunOptions, type TmuxRunner } from './runner-types.js';

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
