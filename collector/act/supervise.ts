// Detached exec actions. The broker hands its lock to a hidden `tma supervise` process and
// returns at once; the supervisor holds the lock for the child's whole life, kills the child's
// group at the deadline, and releases the lock (nonce-conditionally) when it is over.

import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderLockRelease, renderLockRewrite } from '../core/stamp-render.js';
import type { TmuxRunner } from '../tmux/runner.js';
import { runCommand, type ExecEnd } from './exec.js';
import { formatLockValue, lockExpiry } from './lock-value.js';

/** Set only in the single-file build (tools/bundle-single.mjs). */
declare const TMA_SINGLE_FILE: boolean | undefined;

/**
 * How to start `tma` again: node and bin/tma.js of this installation, found from the sources
 * (collector/) or the build (dist/); in the single-file build the file itself, or nothing once
 * it is built into an executable.
 */
export function tmaArgv(): string[] {
  if (typeof TMA_SINGLE_FILE === 'undefined') return [tmaEntry()];
  // An executable's own path stands as argv[1] too (Node's SEA): then nothing goes before the verb.
  const self = process.argv[1]!;
  return self === process.execPath ? [] : [self];
}

/** bin/tma.js of this installation, found from the sources (collector/) or the build (dist/). */
export function tmaEntry(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const bin = join(dir, 'bin', 'tma.js');
    if (existsSync(bin)) return bin;
    const parent = dirname(dir);
    if (parent === dir) throw new Error('bin/tma.js not found above ' + fileURLToPath(import.meta.url));
    dir = parent;
  }
}

export interface SuperviseRequest {
  pane: string;
  name: string;
  nonce: string;
  timeoutMs: number;
  command: string;
}

/** The argv of `tma supervise` after the global server flags. */
export function superviseArgv(req: SuperviseRequest): string[] {
  return ['supervise', '--pane', req.pane, '--name', req.name, '--nonce', req.nonce, '--timeout-ms', String(req.timeoutMs), '--', req.command];
}

/** Start the supervisor with stdio on /dev/null; resolves once the OS has started it. */
export function spawnSupervisor(
  req: SuperviseRequest,
  serverFlags: string[],
  env: Record<string, string>,
): Promise<{ ok: true } | { ok: false; message: string }> {
  return new Promise((resolve) => {
    let child;
    try {
      child = spawn(process.execPath, [...tmaArgv(), ...serverFlags, ...superviseArgv(req)], { env, stdio: 'ignore', detached: true });
    } catch (e) {
      resolve({ ok: false, message: (e as Error).message });
      return;
    }
    child.once('error', (e) => resolve({ ok: false, message: `cannot start the supervisor: ${e.message}` }));
    child.once('spawn', () => {
      child.unref();
      resolve({ ok: true });
    });
  });
}

/** The supervisor's whole life. The lock is always released at the end, whatever happened. */
export async function supervise(runner: TmuxRunner, req: SuperviseRequest, env: Record<string, string>, now: () => number = Date.now): Promise<ExecEnd> {
  const value = formatLockValue({ expiryMs: lockExpiry(now(), req.timeoutMs), nonce: req.nonce, pid: process.pid, name: req.name });
  try {
    await runner.run(renderLockRewrite(req.pane, req.nonce, value));
  } catch {
    // The pane may be gone already; the child still runs to its deadline.
  }
  try {
    return await runCommand(req.command, env, req.timeoutMs, 'ignore');
  } finally {
    await runner.run(renderLockRelease(req.pane, req.nonce)).catch(() => undefined);
  }
}
