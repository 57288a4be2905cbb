// One tmux chain run synchronously, for the quick `tma status` (cli/status-fast.ts): a status bar
// calls it every few seconds, and a synchronous spawn spares it the event loop, the stream
// machinery and a timer. Same argv, markers and error reading as the spawn runner's chains.

import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chainArgv } from './command-syntax.js';
import { errorFromStderr, TmuxError } from './errors.js';
import { DEFAULT_TIMEOUT_MS, type Env } from './runner.js';
import { splitOnMarker } from './spawn-runner.js';
import { globalArgs, type ServerTarget } from './target.js';

/** Each command's output, in order; throws a TmuxError when tmux fails, is missing or times out. */
export function runChainSync(target: ServerTarget, bin: string, cmds: readonly (readonly string[])[], opts: { env: Env; timeoutMs?: number }): string[] {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const marker = `__tma_split_${randomBytes(8).toString('hex')}`;
  const withMarkers: (readonly string[])[] = [];
  cmds.forEach((cmd, i) => {
    if (i > 0) withMarkers.push(['display-message', '-p', marker]);
    withMarkers.push(cmd);
  });
  const r = spawnSync(bin, [...globalArgs(target), ...chainArgv(withMarkers)], {
    env: opts.env as NodeJS.ProcessEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
    encoding: 'utf8',
    timeout: timeoutMs,
    killSignal: 'SIGKILL',
    maxBuffer: 64 << 20,
  });
  if (r.error) {
    const timedOut = (r.error as NodeJS.ErrnoException).code === 'ETIMEDOUT';
    throw timedOut ? new TmuxError('timeout', '', `tmux did not answer within ${timeoutMs} ms`) : new TmuxError('failed', '', `cannot run ${bin}: ${r.error.message}`);
  }
  if (r.status !== 0) {
    if (r.stderr.trim() !== '') throw errorFromStderr(r.stderr);
    throw new TmuxError('failed', '', `tmux exited with ${r.status ?? r.signal}`);
  }
  return splitOnMarker(r.stdout, marker, cmds.length);
}
