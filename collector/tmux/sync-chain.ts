// One tmux chain run synchronously, for the quick `tma status` (cli/status-fast.ts): a status bar
// calls it every few seconds, and a synchronous spawn spares it the event loop, the stream
// machinery and a timer. Same argv, markers and error reading as the spawn runner's chains.

import type * as ChildProcess from 'node:child_process';
import { closeSync, openSync, readSync } from 'node:fs';
import { chainArgv } from './command-syntax.js';
import { errorFromStderr, TmuxError } from './errors.js';
import { DEFAULT_TIMEOUT_MS, type Env } from './runner-types.js';
import { splitOnMarker } from './spawn-runner.js';
import { globalArgs, type ServerTarget } from './target.js';

/**
 * 16 random hex digits for the split marker, so no screen or title can forge it. Read from
 * /dev/urandom: loading node:crypto would cost this short-lived process more than the rest.
 */
function markerNonce(): string {
  const buf = Buffer.alloc(8);
  try {
    const fd = openSync('/dev/urandom', 'r');
    try {
      if (readSync(fd, buf, 0, 8, null) === 8) return buf.toString('hex');
    } finally {
      closeSync(fd);
    }
  } catch {
    // no /dev/urandom here: the Web Crypto source below
  }
  globalThis.crypto.getRandomValues(buf);
  return buf.toString('hex');
}

/**
 * node:child_process, loaded on first use: a quick status that the collector answers never spawns,
 * and loading it costs that short-lived process about a millisecond. A Node 20 older than 20.16
 * has no getBuiltinModule; the CommonJS bundle then uses its require.
 */
function childProcess(): typeof ChildProcess {
  const cp =
    (process.getBuiltinModule?.('node:child_process') as typeof ChildProcess | undefined) ??
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- the CommonJS bundle's way in (see above)
    (typeof require === 'function' ? (require('node:child_process') as typeof ChildProcess) : undefined);
  if (!cp) throw new TmuxError('failed', '', 'cannot load node:child_process here');
  return cp;
}

/** Each command's output, in order; throws a TmuxError when tmux fails, is missing or times out. */
export function runChainSync(target: ServerTarget, bin: string, cmds: readonly (readonly string[])[], opts: { env: Env; timeoutMs?: number }): string[] {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const marker = `__tma_split_${markerNonce()}`;
  const withMarkers: (readonly string[])[] = [];
  cmds.forEach((cmd, i) => {
    if (i > 0) withMarkers.push(['display-message', '-p', marker]);
    withMarkers.push(cmd);
  });
  const r = childProcess().spawnSync(bin, [...globalArgs(target), ...chainArgv(withMarkers)], {
    env: opts.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    encoding: 'utf8',
    timeout: timeoutMs,
    killSignal: 'SIGKILL',
    maxBuffer: 64 << 20,
  });
  if (r.error) {
    const timedOut = (r.error as NodeJS.ErrnoException).code === 'ETIMEDOUT';
    throw timedOut
      ? new TmuxError('timeout', '', `tmux did not answer within ${timeoutMs} ms`)
      : new TmuxError('failed', '', `cannot run ${bin}: ${r.error.message}`);
  }
  if (r.status !== 0) {
    if (r.stderr.trim() !== '') throw errorFromStderr(r.stderr);
    throw new TmuxError('failed', '', `tmux exited with ${r.status ?? r.signal}`);
  }
  return splitOnMarker(r.stdout, marker, cmds.length);
}
