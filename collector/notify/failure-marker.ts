// The last failed notify command, kept in a small file so `tma doctor` (another process) can show
// it. One marker, not a history: the next clean run of a command clears it.

import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

export interface NotifyFailure {
  at: number;
  reason: string;
  command: string;
}

export function failureMarkerPath(env: NodeJS.ProcessEnv): string {
  const base = env.XDG_STATE_HOME || join(env.HOME || homedir(), '.local', 'state');
  return join(base, 'tma', 'notify-failure.json');
}

export function recordFailure(env: NodeJS.ProcessEnv, f: NotifyFailure): void {
  const path = failureMarkerPath(env);
  try {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, `${JSON.stringify(f)}\n`);
  } catch {
    // Nowhere to record it: the notification itself already went (or failed) regardless.
  }
}

export function clearFailure(env: NodeJS.ProcessEnv): void {
  rmSync(failureMarkerPath(env), { force: true });
}

export function lastFailure(env: NodeJS.ProcessEnv): NotifyFailure | null {
  try {
    const v = JSON.parse(readFileSync(failureMarkerPath(env), 'utf8')) as Partial<NotifyFailure>;
    if (typeof v.at === 'number' && typeof v.reason === 'string' && typeof v.command === 'string') return { at: v.at, reason: v.reason, command: v.command };
  } catch {
    // absent or unreadable: nothing to show
  }
  return null;
}
