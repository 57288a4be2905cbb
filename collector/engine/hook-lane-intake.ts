// The collector's half of the hook lane: a waiting PermissionRequest hook is stamped (blocked, with
// its tool, one-line summary and a request id tma made up, since neither Claude Code nor Codex
// names its requests), held in the registry (hook-requests.ts) until it is answered, withdrawn or
// its wait runs out, and `@tma_hook_request` says meanwhile that the pane's lane is the hook.

import { HookRequests, newHookRequestId, type HookEnd } from '../act/hook-requests.js';
import { topLevel } from '../core/hook-event.js';
import { KEY } from '../core/store-codec.js';
import type { AgentManifest } from '../core/types.js';
import type { TmuxRunner } from '../tmux/runner.js';
import { ALLOW, ANSWERED, ANSWERED_BEFORE, CHANGED, DENY, NAK, NOTHING, type HookAnswerRequest, type PermissionWait } from '../fleet/wake.js';
import { intakeEvent } from './event-intake.js';

/** The pane option that names the request a hook waits on, while it waits. */
export const HOOK_REQUEST_KEY = '@tma_hook_request';

export interface HookLaneDeps {
  runner: TmuxRunner;
  manifests: readonly AgentManifest[];
  requests: HookRequests;
  /** Publish now (the pane changed). */
  wake: () => void;
  log: (line: string) => void;
  now?: () => number;
}

/** The hook's payload with tma's request id in it, so the stamp records it as the prompt's name. */
function withRequestId(payload: string, id: string): string | null {
  const top = topLevel(payload);
  return top === null ? null : JSON.stringify({ ...top, request_id: id });
}

const endByte = (end: HookEnd): number => (end.kind === 'withdrawn' ? NAK : end.behavior === 'allow' ? ALLOW : DENY);

/** Take a waiting hook: stamp, hold, and send its one byte when the request ends. */
export async function takePermissionWait(
  d: HookLaneDeps,
  w: PermissionWait,
  held: () => void,
  answer: (byte: number) => void,
  onGone: (fn: () => void) => void,
): Promise<void> {
  const id = newHookRequestId();
  const payload = withRequestId(w.payload, id);
  if (payload === null || !d.manifests.some((m) => m.name === w.agent)) {
    answer(NAK);
    return;
  }
  const now = d.now ?? Date.now;
  try {
    await intakeEvent({ runner: d.runner, manifests: d.manifests, agent: w.agent, kind: 'PermissionRequest', pane: w.pane, payload, now: now() });
    // Only a request the pane now shows as this one may be answered through the hook (a guarded
    // write that a later event overruled, or a manifest that does not map the event, is not).
    const [shown] = await d.runner.runChain([
      ['show-options', '-pqv', '-t', w.pane, KEY.permissionRequest],
      ['set-option', '-p', '-t', w.pane, HOOK_REQUEST_KEY, id],
    ]);
    if ((shown ?? '').trim() !== id) {
      await d.runner.run(['set-option', '-p', '-u', '-t', w.pane, HOOK_REQUEST_KEY]).catch(() => undefined);
      answer(NAK);
      return;
    }
  } catch (e) {
    d.log(`hook lane ${w.pane}: ${(e as Error).message}`);
    answer(NAK);
    return;
  }
  d.requests.register({ id, agent: w.agent, pane: w.pane }, w.waitMs, (end) => {
    answer(endByte(end));
    d.log(`hook lane ${w.pane}: request ${id} ${end.kind === 'answered' ? `answered ${end.behavior}` : `withdrawn (${end.reason})`}`);
    // The lane is the hook only while it waits; a value already replaced by the next request stays.
    void d.runner
      .run(['set-option', '-p', '-t', w.pane, '-F', HOOK_REQUEST_KEY, `#{?#{==:#{${HOOK_REQUEST_KEY}},${id}},,#{${HOOK_REQUEST_KEY}}}`])
      .catch(() => undefined)
      .then(d.wake);
  });
  onGone(() => d.requests.withdraw(w.pane, 'hook-gone', id));
  held();
  d.wake();
}

/** Settle a pane's waiting hook for an `act` outside this process; one byte says what happened. */
export function answerFromWire(requests: HookRequests, a: HookAnswerRequest): number {
  const r = requests.settle(a.pane, a.behavior, a.requestId);
  switch (r.kind) {
    case 'answered':
      return ANSWERED;
    case 'answered-before':
      return ANSWERED_BEFORE;
    case 'changed':
      return CHANGED;
    case 'none':
      return NOTHING;
  }
}
