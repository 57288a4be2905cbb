// The hook lane's pending permission requests, held by the collector. An agent's PermissionRequest
// hook (`tma event --kind PermissionRequest`) registers its request here and waits; an `act`
// answers it, or the hook's wait runs out, or a key press takes the prompt instead. Each request
// ends exactly once: every transition is one synchronous step of this process's event loop, so
// "answered through the hook" and "withdrawn (timeout, key lane, agent moved on)" can never both
// happen to the same request, however many answers race each other or the deadline.

import { randomBytes } from 'node:crypto';

export type HookBehavior = 'allow' | 'deny';

/** Why a request ended without an answer through the hook. */
export type WithdrawReason = 'timeout' | 'keys' | 'replaced' | 'hook-gone' | 'moved-on';

export interface HookRequestInfo {
  id: string;
  agent: string;
  pane: string;
}

/** How a request ended: the answer (the hook prints it), or null (the hook prints nothing). */
export type HookEnd = { kind: 'answered'; behavior: HookBehavior } | { kind: 'withdrawn'; reason: WithdrawReason };

interface Entry extends HookRequestInfo {
  timer: NodeJS.Timeout | null;
  onEnd: (end: HookEnd) => void;
}

/** What an answer through the hook lane did. */
export type HookAnswer =
  /** The hook got it and prints it to the agent. */
  | { kind: 'answered'; id: string }
  /** This request was answered through the hook already: the key lane must not answer it again. */
  | { kind: 'answered-before'; id: string }
  /** The pane's pending request is not the one the caller saw. */
  | { kind: 'changed'; id: string }
  /** Nothing pending through the hook (never was, or withdrawn): the key lane decides. */
  | { kind: 'none' };

/** How many answered ids are remembered per pane (a request is answered once; later asks are refused). */
const ANSWERED_MEMORY = 16;

export const newHookRequestId = (): string => `hook-${randomBytes(8).toString('hex')}`;

export class HookRequests {
  private readonly pending = new Map<string, Entry>();
  private readonly answered = new Map<string, string[]>();

  /**
   * A hook waits on `pane`. A request already pending there is withdrawn first: the agent asks one
   * question at a time, so an older one is a hook the agent gave up on.
   */
  register(info: HookRequestInfo, waitMs: number, onEnd: (end: HookEnd) => void): void {
    this.withdraw(info.pane, 'replaced');
    const entry: Entry = { ...info, timer: null, onEnd };
    entry.timer = setTimeout(() => this.end(entry, { kind: 'withdrawn', reason: 'timeout' }), waitMs);
    entry.timer.unref();
    this.pending.set(info.pane, entry);
  }

  /** The request pending on `pane`, if any. */
  pendingOn(pane: string): HookRequestInfo | null {
    const e = this.pending.get(pane);
    return e === undefined ? null : { id: e.id, agent: e.agent, pane: e.pane };
  }

  /**
   * Answer the pane's pending request through its hook, atomically. `expectId` (the request the
   * caller saw on the pane) must be the pending one when given. With `behavior` null the caller is
   * the key lane: a pending request is withdrawn so its hook prints nothing and the keys decide.
   */
  settle(pane: string, behavior: HookBehavior | null, expectId: string | null): HookAnswer {
    const e = this.pending.get(pane);
    if (e === undefined) {
      const done = this.answered.get(pane) ?? [];
      if (expectId !== null && done.includes(expectId)) return { kind: 'answered-before', id: expectId };
      return { kind: 'none' };
    }
    if (expectId !== null && expectId !== e.id) return { kind: 'changed', id: e.id };
    if (behavior === null) {
      this.end(e, { kind: 'withdrawn', reason: 'keys' });
      return { kind: 'none' };
    }
    this.end(e, { kind: 'answered', behavior });
    return { kind: 'answered', id: e.id };
  }

  /** End the pane's pending request without an answer (the hook went away, the agent moved on). */
  withdraw(pane: string, reason: WithdrawReason, id: string | null = null): boolean {
    const e = this.pending.get(pane);
    if (e === undefined || (id !== null && e.id !== id)) return false;
    this.end(e, { kind: 'withdrawn', reason });
    return true;
  }

  /** Withdraw every pending request (the collector is stopping). */
  close(): void {
    for (const e of [...this.pending.values()]) this.end(e, { kind: 'withdrawn', reason: 'hook-gone' });
  }

  private end(e: Entry, end: HookEnd): void {
    if (this.pending.get(e.pane) !== e) return;
    this.pending.delete(e.pane);
    if (e.timer !== null) clearTimeout(e.timer);
    if (end.kind === 'answered') {
      const list = [...(this.answered.get(e.pane) ?? []), e.id].slice(-ANSWERED_MEMORY);
      this.answered.set(e.pane, list);
    }
    e.onEnd(end);
  }
}

/** The registry of the collector that follows a server, by its canonical socket path (in-process only). */
const byServer = new Map<string, HookRequests>();

export function hookRequestsFor(canonicalSocket: string, create = false): HookRequests | null {
  let r = byServer.get(canonicalSocket) ?? null;
  if (r === null && create) {
    r = new HookRequests();
    byServer.set(canonicalSocket, r);
  }
  return r;
}

export function dropHookRequests(canonicalSocket: string): void {
  byServer.get(canonicalSocket)?.close();
  byServer.delete(canonicalSocket);
}

/** The hook wire both Claude Code and Codex read from a PermissionRequest hook's stdout. */
export function permissionWire(behavior: HookBehavior): string {
  const decision = behavior === 'allow' ? { behavior } : { behavior, message: 'Denied through tma' };
  return JSON.stringify({ hookSpecificOutput: { hookEventName: 'PermissionRequest', decision } });
}

/** The hook decision a keys action gives through the hook lane; null: it has none (keys only). */
export function hookBehaviorOf(actionName: string): HookBehavior | null {
  return actionName === 'approve' ? 'allow' : actionName === 'deny' ? 'deny' : null;
}
