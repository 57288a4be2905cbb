// Firing one action on one pane. The order is the safety argument: gate on what the pane shows
// (re-detected if the stamp is stale), take the pane's lock, read the pane again under the lock
// and gate again (plus the caller's binders), act once, release. Callable as a library: a
// collector runs it on behalf of a hub, with the slot as the idempotency key.

import { randomBytes } from 'node:crypto';
import type { ActionManifest } from '../core/action-manifest.js';
import { renderLockAcquire, renderLockRead, renderLockRelease, renderLockRewrite } from '../core/stamp-render.js';
import type { Engine } from '../engine/cycle.js';
import { isPaneGone, TmuxError } from '../tmux/errors.js';
import type { TmuxRunner } from '../tmux/runner.js';
import { replyPermission } from './api-lane.js';
import { runCommand } from './exec.js';
import { baseEnv, execEnv } from './exec-env.js';
import { readPaneFacts, type PaneFacts } from './facts.js';
import { apiPrecondition, apiTransportFor, binderRefusal, endpointFor, gate, keysFor, laneFor } from './gate.js';
import { formatLockValue, holdsLock, LOCK_SLACK_MS, lockExpiry, lockHeld, nonceFromBytes } from './lock-value.js';
import { actResult, type ActReason, type ActResult, type GateReason } from './outcome.js';
import { claimSlot, isInFlightRecord, readReplay, receiptPath, receiptsDir, recordResult } from './receipts.js';
import { exclusive } from './pane-mutex.js';
import { formatAnswered, parseAnswered, type Answered } from '../core/prompt-id.js';
import { ANSWERED_KEY, FUTURE_MARK_MS } from '../engine/prompt-writes.js';
import { ownAnswer, recordAnswer, recordCovers, type AnswerRecord } from './answered-record.js';
import { paintedSince } from '../engine/settled-read.js';
import { spawnSupervisor } from './supervise.js';
import { optionHighlighted } from './highlight.js';
import { settleHookLane } from './hook-lane.js';
import { hookBehaviorOf } from './hook-requests.js';

export const ACT_FRESHNESS_MS = 3000;

export interface Binders {
  expectEpisodeMs?: number | null;
  expectPermissionRequest?: string | null;
  /** The prompt_id the caller saw: another prompt is refused `prompt-changed`. */
  expectPrompt?: string | null;
}

export interface FireOptions {
  runner: TmuxRunner;
  engine: Engine;
  action: ActionManifest;
  pane: string;
  binders?: Binders;
  /** Idempotency key; the result then carries `cached`. */
  slot?: string | null;
  force?: boolean;
  /**
   * `--again` (local only): answer a prompt this pane already answered, for a person who knows
   * the key was lost. Nothing else skips the answered-once check.
   */
  again?: boolean;
  /** Confirmation already given for a `confirm = true` action. */
  yes?: boolean;
  /** `--arg` values (exec only). */
  args?: string[];
  /** `[api.<agent>] api_base` fallbacks. */
  apiBase?: Readonly<Record<string, string>>;
  /** A keys stamp at least this old is re-detected before the gate (default 3000). */
  freshnessMs?: number;
  /** Environment for the receipts directory and the exec child (default process.env). */
  env?: Readonly<Record<string, string | undefined>>;
  /** The same server as tma flags, forwarded to a detached supervisor. */
  serverFlags?: string[];
  /** Sync exec stdio: the CLI passes it through, a collector does not. */
  stdio?: 'inherit' | 'ignore';
  now?: () => number;
  pidAlive?: (pid: number) => boolean;
  /** Messages that do not fit the result object (tmux stderr, HTTP failures). */
  onNote?: (message: string) => void;
}

export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** How long the lock must outlive the fire. */
function lockBound(action: ActionManifest): number {
  return action.kind === 'exec' && action.detach ? action.detachTimeoutMs : action.timeoutMs;
}

/**
 * Whether a look at the screen can identify this agent's prompt. Without its manifest (an empty or
 * broken set) it cannot: the keys then go out bound to no prompt id, and the answered mark that
 * records no id refuses every later keys action until the pane is seen unblocked.
 */
function canLook(engine: Engine, agent: string | null): boolean {
  return engine.manifests.some((m) => m.name === agent);
}

function hasContextTelemetry(engine: Engine, agent: string | null): boolean {
  return engine.manifests.some((m) => m.name === agent && m.telemetry.context !== null);
}

/** Every refusal that depends only on what the pane shows, in the order they are reported. */
export function refusalFor(o: FireOptions, f: PaneFacts): GateReason | null {
  const action = o.action;
  const g = gate(action, f, { hasContextTelemetry: hasContextTelemetry(o.engine, f.agent), force: o.force ?? false });
  if (g === 'wrong-agent') return g;
  const b = binderRefusal(o.binders ?? {}, { episodeMs: f.episodeMs, permissionRequest: f.permissionRequest, promptId: f.promptId ?? null });
  if (b !== null) return b;
  if (g !== null) return g;
  return apiPrecondition(action, f.agent, f.permissionRequest, endpointFor(f.apiEndpoint, f.agent, o.apiBase ?? {}));
}

class Finished {
  constructor(readonly result: ActResult) {}
}

/** Fire `action` on `pane`. Never throws for runtime failures: they become `error` results. */
export async function fireAction(o: FireOptions): Promise<ActResult> {
  const note = o.onNote ?? (() => {});
  if (!o.slot) return fireOnce(o).catch((e: unknown) => failure(o, e, note));
  let socket: string;
  try {
    socket = (await o.engine.server.get()).socketPath;
  } catch (e) {
    return { ...failure(o, e, note), cached: false };
  }
  const dir = receiptsDir(o.env ?? process.env);
  // A fire with this slot still running in this process: its result is the answer, not a guess.
  const running = inFlight.get(receiptPath(dir, o.slot, socket));
  if (running !== undefined) return { ...(await running), cached: true };
  const claim = claimSlot(dir, o.slot, socket, o.action.name, o.pane);
  if (claim.kind === 'replay') {
    if (claim.result.reason !== 'fired-unknown') return claim.result;
    // Another process holds the slot: wait for its final record as long as its fire may last.
    return awaitReplay(claim.path, o.action.name, o.pane, lockBound(o.action) + LOCK_SLACK_MS, o.now ?? Date.now);
  }
  const firing = fireOnce(o).catch((e: unknown) => failure(o, e, note));
  inFlight.set(claim.path, firing);
  try {
    const result = await firing;
    recordResult(claim.path, result);
    return { ...result, cached: false };
  } finally {
    inFlight.delete(claim.path);
  }
}

/** Fires with a slot under way in this process, by receipt path. */
const inFlight = new Map<string, Promise<ActResult>>();

async function awaitReplay(path: string, action: string, pane: string, boundMs: number, now: () => number): Promise<ActResult> {
  const until = now() + boundMs;
  for (;;) {
    const r = readReplay(path, action, pane);
    if (r.reason !== 'fired-unknown') return r;
    // Final since the read above: read again, or a stale "unknown" would stand for the result.
    if (!isInFlightRecord(path)) return readReplay(path, action, pane);
    if (now() >= until) return r;
    await new Promise((res) => setTimeout(res, 50));
  }
}

function failure(o: FireOptions, e: unknown, note: (m: string) => void): ActResult {
  if (e instanceof Finished) return e.result;
  if (e instanceof TmuxError) note(e.kind === 'server-gone' ? 'no tmux server running' : e.message);
  else note((e as Error).message);
  return actResult(o.action.name, o.pane, 'error');
}

function fireOnce(o: FireOptions): Promise<ActResult> {
  return exclusive(o.engine, o.pane, () => fireLocked(o));
}

/**
 * The facts with the prompt id this process derived from its own look at the pane, never the
 * `@tma_prompt_id` option another writer may have rewritten. A look older than the freshness
 * window, or from another episode, is taken again first. null: the pane is gone.
 */
async function withOwnPrompt(o: FireOptions, f: PaneFacts): Promise<PaneFacts | null> {
  const now = o.now ?? Date.now;
  if (f.state !== 'blocked' || !canLook(o.engine, f.agent)) return { ...f, promptId: f.state === 'blocked' ? null : (f.promptId ?? null) };
  const seen = o.engine.promptSeen(o.pane);
  if (seen === null || seen.since !== f.stamp?.since || now() - seen.at >= (o.freshnessMs ?? ACT_FRESHNESS_MS)) {
    await o.engine.cycle({ recapture: o.pane });
    const g = await readPaneFacts(o.runner, o.pane);
    return g === null ? null : ownPromptOf(o, g);
  }
  return ownPromptOf(o, f);
}

function ownPromptOf(o: FireOptions, f: PaneFacts): PaneFacts {
  const seen = o.engine.promptSeen(o.pane);
  const own = f.state === 'blocked' && seen !== null && seen.since === f.stamp?.since ? seen.id : null;
  return { ...f, promptId: own };
}

/** The pane's answered mark, unless it is dated in the future (a stepped clock, another writer). */
function usableMark(o: FireOptions, raw: string | null | undefined): Answered | null {
  const a = parseAnswered(raw ?? undefined);
  const now = (o.now ?? Date.now)();
  if (a !== null && a.at > now + FUTURE_MARK_MS) {
    o.onNote?.(`ignoring ${ANSWERED_KEY} on ${o.pane}: dated ${a.at - now} ms in the future`);
    return null;
  }
  return a;
}

/**
 * Whether this keys action would answer a prompt this pane already answered: by the pane's mark
 * or by this broker's own record (which an erased or rewritten mark does not undo). A stamp no
 * newer than the answer cannot tell (the agent may not have repainted yet, or nobody looked
 * since): the pane is captured and judged again first. Returns the facts it ended up judging.
 */
async function answeredAlready(o: FireOptions, g: PaneFacts, own: AnswerRecord | null): Promise<{ answered: boolean; facts: PaneFacts | null }> {
  const mark = usableMark(o, g.answered);
  const a: Answered | null = mark ?? (own !== null && own.since === g.stamp?.since ? { promptId: own.promptId, at: own.at } : null);
  const unidentified = g.state === 'blocked' && (g.promptId ?? null) === null && canLook(o.engine, g.agent);
  // Even with nothing answered yet, the keys must be bound to a prompt: its id goes in the mark.
  if ((a === null || o.again) && !unidentified) return { answered: false, facts: g };
  let f: PaneFacts | null = g;
  if (unidentified || (a !== null && g.stampedAt <= a.at)) {
    await o.engine.cycle({ recapture: o.pane });
    f = await readPaneFacts(o.runner, o.pane);
    if (f === null) return { answered: false, facts: null };
    f = ownPromptOf(o, f);
  }
  if (a === null || o.again) return { answered: false, facts: f };
  const pid = f.promptId ?? null;
  // A mark that could not name its prompt covers whatever blocked prompt is showing.
  const byMark = mark !== null && f.state === 'blocked' && (mark.promptId === null || pid === mark.promptId);
  return { answered: byMark || recordCovers(own, f.state, f.stamp?.since ?? null, pid), facts: f };
}

async function fireLocked(o: FireOptions): Promise<ActResult> {
  const { action, pane, runner } = o;
  const now = o.now ?? Date.now;
  const done = (outcome: ActResult['outcome'], reason: ActReason | null = null, code = 0): ActResult => actResult(action.name, pane, outcome, reason, code);

  // A confirm action never fires on an implied yes.
  if (action.confirm && !o.yes) return done('error');

  let f = await readPaneFacts(runner, pane);
  if (f === null) return done('vanished', 'pane-gone');

  // A stale keys stamp is re-detected (keys land on whatever screen is there now). A pane
  // never stamped at all is detected for any kind: otherwise no agent could be named there.
  const t = now();
  // A young stamp is stale too once the pane painted after it: a dialog that showed after a
  // hook's working claim, the work that followed an answer.
  const stale =
    f.stampedAt === 0 ||
    f.stampedAt > t ||
    t - f.stampedAt >= (o.freshnessMs ?? ACT_FRESHNESS_MS) ||
    (f.stamp !== null && paintedSince(f.stamp, f.windowActivity ?? 0));
  // A blocked keys target whose prompt is not identified yet (a hook stamped it) is looked at:
  // the answer must be bound to a prompt someone could have seen.
  const unidentified = action.kind === 'keys' && f.state === 'blocked' && (f.promptId ?? null) === null && canLook(o.engine, f.agent);
  if (f.stamp === null || (action.kind === 'keys' && ((!o.force && stale) || unidentified))) {
    // A stale stamp is looked at here and now: a collector's heartbeat may vouch for it to
    // readers, but keys are only sent on what the pane shows this moment.
    await o.engine.cycle(unidentified || (f.stamp !== null && stale) ? { recapture: pane } : {});
    f = await readPaneFacts(runner, pane);
    if (f === null) return done('vanished', 'pane-gone');
  }
  if (action.kind === 'keys') {
    f = await withOwnPrompt(o, f);
    if (f === null) return done('vanished', 'pane-gone');
  }
  const before = refusalFor(o, f);
  if (before !== null) return done('refused', before);

  const alive = o.pidAlive ?? processAlive;
  if (lockHeld(f.lock, now(), alive)) return done('refused', 'locked');
  const nonce = nonceFromBytes(randomBytes(16));
  const t0 = now();
  const value = formatLockValue({ expiryMs: lockExpiry(t0, lockBound(action)), nonce, pid: process.pid, name: action.name });
  // What the acquire replaced is read in the same chain: a lock past its deadline whose holder
  // still runs (a fire stalled on a loaded machine) is handed back, never taken over.
  const acquired = await tmux(o, () => runner.runChain([renderLockRead(pane), renderLockAcquire(pane, value, t0), renderLockRead(pane)]));
  if (!holdsLock((acquired[2] ?? '').trim(), nonce)) return done('refused', 'locked');
  const replaced = (acquired[0] ?? '').trim();
  if (replaced !== '' && lockHeld(replaced, now(), alive)) {
    await runner.run(renderLockRewrite(pane, nonce, replaced)).catch(() => undefined);
    return done('refused', 'locked');
  }

  let handedOver = false;
  try {
    let g = await readPaneFacts(runner, pane);
    if (g === null) return done('vanished', 'pane-gone');
    const socket = action.kind === 'keys' ? (await o.engine.server.get()).socketPath : '';
    const stateDir = receiptsDir(o.env ?? process.env);
    if (action.kind === 'keys') {
      g = await withOwnPrompt(o, g);
      if (g === null) return done('vanished', 'pane-gone');
      const seen = await answeredAlready(o, g, ownAnswer(stateDir, socket, pane));
      if (seen.facts === null) return done('vanished', 'pane-gone');
      g = seen.facts;
      if (seen.answered) return done('refused', 'answered');
    }
    // The same agent process must still be there: a new one is a different conversation.
    if (g.agent !== f.agent || (f.pid !== 0 && g.pid !== 0 && g.pid !== f.pid)) return done('refused', 'wrong-agent');
    const under = refusalFor(o, g);
    if (under !== null) return done('refused', under);

    if (action.kind === 'keys') {
      const ep = endpointFor(g.apiEndpoint, g.agent, o.apiBase ?? {});
      const api = laneFor(action, g.agent, ep) === 'api' ? apiTransportFor(action, g.agent) : null;
      const answeredAt = now();
      const answered = formatAnswered({ promptId: g.promptId ?? null, at: answeredAt, nonce });
      const mark: string[] = ['set-option', '-p', '-t', pane, ANSWERED_KEY, answered];
      const since = g.stamp?.since ?? 0;
      const remember = () => recordAnswer(stateDir, socket, pane, { promptId: g.promptId ?? null, at: answeredAt, since }, o.onNote);
      // The hook lane first: a PermissionRequest hook waiting on this pane is answered through it,
      // or withdrawn (its hook prints nothing) before any key goes, in one step on the collector.
      const hook = await settleHookLane(o.engine, pane, hookBehaviorOf(action.name), g.permissionRequest, o.env ?? process.env);
      if (hook.kind === 'answered') {
        remember();
        await runner.run(mark).catch(() => undefined);
        return done('replied');
      }
      if (hook.kind === 'answered-before') return done('refused', 'answered');
      if (hook.kind === 'changed') return done('refused', 'prompt-changed');
      if (hook.kind === 'unreachable') {
        o.onNote?.("the collector holding this pane's hook lane did not answer: not sending keys");
        return done('error');
      }
      if (api !== null) {
        const end = await replyPermission(ep!, g.permissionRequest!, api.reply, action.timeoutMs);
        if (end.kind === 'replied') {
          remember();
          await runner.run(mark).catch(() => undefined);
          return done('replied');
        }
        if (end.kind === 'gone') return done('vanished', 'request-gone');
        o.onNote?.(end.message);
        return done('error');
      }
      // The dialog on screen picks the keys (its detail, judged under the lock just above).
      const keys = keysFor(action, g.agent, g.detail)!;
      // Keys that take the highlighted option go only while it is the one they are meant to pick:
      // the person at the terminal may have moved the cursor to another. Read with escapes, as
      // the highlight is only a colour. A dialog's own keys carry no such check.
      const option = keys === action.keys[g.agent!] ? action.cursor[g.agent!] : undefined;
      if (option !== undefined && !optionHighlighted(await tmux(o, () => runner.run(['capture-pane', '-p', '-e', '-t', pane])), option)) {
        o.onNote?.(`the dialog does not highlight "${option}" (the cursor is on another option): not sending ${keys.join(' ')}`);
        return done('refused', 'gated');
      }
      // The mark rides in the same chain as the keys: no moment where they landed unrecorded.
      // The own record is kept before the keys go: a kill in between errs toward not answering twice.
      remember();
      await tmux(o, () => runner.runChain([['send-keys', '-t', pane, ...keys], mark]));
      return done('sent');
    }

    const env = { ...baseEnv(o.env ?? process.env), ...execEnv(action.name, g, o.args ?? []) };
    if (action.detach) {
      const started = await spawnSupervisor(
        { pane, name: action.name, nonce, timeoutMs: action.detachTimeoutMs, command: action.command },
        o.serverFlags ?? [],
        env,
      );
      if (!started.ok) {
        o.onNote?.(started.message);
        return done('error');
      }
      handedOver = true;
      return done('spawned');
    }
    const end = await runCommand(action.command, env, action.timeoutMs, o.stdio ?? 'inherit');
    if (end.kind === 'exited') return done('exited', null, end.code);
    if (end.kind === 'timeout') return done('timeout');
    o.onNote?.(end.message);
    return done('error');
  } finally {
    if (!handedOver) await runner.run(renderLockRelease(pane, nonce)).catch(() => undefined);
  }
}

/** Run a tmux step of the fire; a pane gone under us is `vanished`, other failures `error`. */
async function tmux<T>(o: FireOptions, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (e) {
    if (e instanceof TmuxError && e.kind === 'failed' && isPaneGone(e.stderr)) {
      throw new Finished(actResult(o.action.name, o.pane, 'vanished', 'pane-gone'));
    }
    throw e;
  }
}
