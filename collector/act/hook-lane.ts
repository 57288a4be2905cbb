// The hook lane as the broker uses it: answer the pane's waiting PermissionRequest hook, or, for
// the key lane, withdraw it first so a key press and a hook answer can never both land. Inside the
// collector that follows the server the registry is at hand; any other process (the one-shot
// `tma act`) asks that collector over its wake socket.

import type { Engine } from '../engine/cycle.js';
import { askHookAnswer } from '../fleet/hook-wait.js';
import { ANSWERED, ANSWERED_BEFORE, CHANGED, NAK, NOTHING, canonicalSocketPath, wakeDir, wakeSocketPath } from '../fleet/wake.js';
import { hookRequestsFor, type HookAnswer, type HookBehavior } from './hook-requests.js';

type Env = Readonly<Record<string, string | undefined>>;

export type HookSettle = HookAnswer | { kind: 'unreachable' };

/** A request id tma made up for a hook (hook-lane-intake.ts), as the pane names it. */
const isHookId = (id: string | null | undefined): id is string => typeof id === 'string' && id.startsWith('hook-');

/**
 * Settle the pane's hook request: answer it with `behavior`, or (null) withdraw it for the keys.
 * `unreachable`: a collector's wake socket is there but did not answer, so nobody can tell
 * whether a hook waits; the caller must not send keys then.
 */
export async function settleHookLane(engine: Engine, pane: string, behavior: HookBehavior | null, shownRequest: string | null, env: Env): Promise<HookSettle> {
  const socket = canonicalSocketPath((await engine.server.get()).socketPath);
  const expect = isHookId(shownRequest) ? shownRequest : null;
  const local = hookRequestsFor(socket);
  if (local !== null) return local.settle(pane, behavior, expect);
  const byte = await askHookAnswer(wakeSocketPath(socket, wakeDir(env)), { pane, behavior, requestId: expect });
  // Nobody listens: no collector holds a hook (a hook whose collector died printed nothing).
  if (byte === 'absent') return { kind: 'none' };
  if (byte === 'timeout') return { kind: 'unreachable' };
  if (byte === ANSWERED) return { kind: 'answered', id: expect ?? '' };
  if (byte === ANSWERED_BEFORE) return { kind: 'answered-before', id: expect ?? '' };
  if (byte === CHANGED) return { kind: 'changed', id: '' };
  // NOTHING, or NAK from a collector without the hook lane (no hook can wait there).
  return byte === NOTHING || byte === NAK ? { kind: 'none' } : { kind: 'unreachable' };
}
