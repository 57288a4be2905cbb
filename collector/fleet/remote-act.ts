// A hub's act request, answered on this host. The hub has already checked the caller's role; here
// the host applies its own policy (which actions a hub may fire at all) and then runs the very
// broker `tma act` runs, so gate, lock, re-check and binders are the same as at the keyboard.
//
// The hub's slot becomes a receipt key in its own namespace, so a retried or duplicated request
// replays the first one's result and a local `--slot` of the same text can never collide with it.

import type { ActionManifest } from '../core/action-manifest.js';
import { fireAction, type FireOptions } from '../act/broker.js';
import type { Engine } from '../engine/cycle.js';
import type { ActResult } from '../../shared/protocol.js';
import type { ActRequest } from './publisher.js';

export interface RemotePolicy {
  /** `[remote] allow_actions`; null = unset. */
  allowActions: readonly string[] | null;
  /** `[remote] allow_exec`. */
  allowExec: boolean;
}

/** Why this host will not fire an action for a hub, or null when it will. */
export function remoteRefusal(action: ActionManifest | undefined, policy: RemotePolicy): string | null {
  if (!action) return 'no such action on this host';
  // Nobody at this host can answer a confirmation, and a hub's request is not one.
  if (action.confirm) return 'it asks for confirmation';
  const listed = policy.allowActions?.includes(action.name) ?? false;
  if (action.kind === 'exec') {
    if (!policy.allowExec) return 'exec actions are off remotely ([remote] allow_exec)';
    if (!listed) return 'exec actions must be listed in [remote] allow_actions';
    return null;
  }
  if (policy.allowActions !== null && !listed) return 'not listed in [remote] allow_actions';
  return null;
}

/** The names a hub may fire here, in action-set order: what the hello announces. */
export function remoteAllowed(actions: readonly ActionManifest[], policy: RemotePolicy): string[] {
  return actions.filter((a) => remoteRefusal(a, policy) === null).map((a) => a.name);
}

/** The receipt key of a hub slot: never equal to a key a person typed at this host. */
export const hubSlot = (slot: string) => `hub:${slot}`;

export interface RemoteActDeps {
  host: string;
  policy: RemotePolicy;
  /** The action set, loaded fresh per request like `tma act` does; a string says why it failed. */
  loadActions: () => ActionManifest[] | string;
  engineFor: (server: string) => Engine | null;
  apiBase: Readonly<Record<string, string>>;
  freshnessMs: number;
  env: Readonly<Record<string, string | undefined>>;
  /** `--config` of this collector, forwarded to a detached action's supervisor. */
  configPath: string | null;
  log: (line: string) => void;
  /** The broker; tests substitute it. */
  fire?: (o: FireOptions) => Promise<{ action: string; pane: string; outcome: string; exit_code: number; reason: string | null; cached?: boolean }>;
}

/** The `onAct` of a publisher: never throws, always answers with a result. */
export function remoteActHandler(d: RemoteActDeps): (req: ActRequest) => Promise<ActResult> {
  const fire = d.fire ?? fireAction;
  return async (req) => {
    const answer = (r: { outcome: string; exit_code: number; reason: string | null; cached?: boolean }): ActResult => ({
      schema: 1,
      action: req.action,
      pane: req.pane,
      outcome: r.outcome,
      exit_code: r.exit_code,
      reason: r.reason,
      ...(r.cached !== undefined ? { cached: r.cached } : {}),
      host: d.host,
      server: req.server,
    });
    let result: ActResult;
    let why: string | null = null;
    const loaded = d.loadActions();
    if (typeof loaded === 'string') {
      why = `action set unusable: ${loaded}`;
      result = answer({ outcome: 'error', exit_code: 1, reason: null });
    } else {
      const action = loaded.find((a) => a.name === req.action);
      const refusal = remoteRefusal(action, d.policy);
      const engine = refusal === null ? d.engineFor(req.server) : null;
      if (refusal !== null) {
        why = refusal;
        result = answer({ outcome: 'refused', exit_code: 4, reason: 'not-allowed' });
      } else if (engine === null) {
        why = 'this collector does not follow that tmux server';
        result = answer({ outcome: 'vanished', exit_code: 3, reason: 'pane-gone' });
      } else {
        const r = await fire({
          runner: engine.runner,
          engine,
          action: action!,
          pane: req.pane,
          binders: {
            expectEpisodeMs: req.expect_episode_ms,
            expectPermissionRequest: req.expect_permission_request,
            expectPrompt: req.expect_prompt ?? null,
          },
          slot: hubSlot(req.slot),
          force: false,
          yes: false,
          args: [],
          apiBase: d.apiBase,
          freshnessMs: d.freshnessMs,
          env: d.env,
          serverFlags: ['--socket-path', req.server, ...(d.configPath ? ['--config', d.configPath] : [])],
          // On `--stdio` this process's stdout is the link itself.
          stdio: 'ignore',
          onNote: (m) => d.log(`remote act ${req.action} ${req.pane}: ${m}`),
        });
        result = answer(r);
      }
    }
    // Who, where, what, the binders and the outcome; never a title (the request carries none).
    d.log(
      `remote act ${JSON.stringify({
        who: req.principal,
        host: d.host,
        server: req.server,
        pane: req.pane,
        action: req.action,
        expect_episode_ms: req.expect_episode_ms,
        expect_permission_request: req.expect_permission_request,
        expect_prompt: req.expect_prompt ?? null,
        slot: req.slot,
        outcome: result.outcome,
        reason: result.reason,
        exit_code: result.exit_code,
        cached: result.cached ?? null,
        ...(why ? { why } : {}),
      })}`,
    );
    return result;
  };
}
