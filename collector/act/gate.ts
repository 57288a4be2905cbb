// The gate: may this action fire on this pane as it stands? Pure. Reasons come most-permanent
// first, so a caller learns the thing a retry cannot fix before the thing that may pass later.

import type { ActionManifest } from '../core/action-manifest.js';
import type { State } from '../core/types.js';
import type { GateReason } from './outcome.js';

/** What the gate reads about a pane; every field as the pane options hold it right now. */
export interface GateFacts {
  /** @agent_name of a stamped pane; null when no agent is stamped there. */
  agent: string | null;
  state: State | null;
  detail: string | null;
  contextPct: number | null;
  session: string | null;
  cwd: string;
  pid: number;
  title: string;
}

export interface GateOptions {
  /** Whether the agent's manifest reports context usage at all. */
  hasContextTelemetry: boolean;
  /** `--force`: skip `when` (and so no-coverage), never applicability or `requires`. */
  force: boolean;
}

const SESSION_ID = /^[A-Za-z0-9_-]+$/;

/** Whether the action has a transport (keys) or a listing (exec) for this agent. */
export function appliesTo(action: ActionManifest, agent: string | null): boolean {
  if (agent === null || agent === '') return false;
  if (action.kind === 'keys') return agent in action.keys || agent in action.api;
  return action.agents.length === 0 || action.agents.includes(agent);
}

function requirementsMet(action: ActionManifest, f: GateFacts): boolean {
  return action.requires.every((r) => {
    switch (r) {
      case 'session':
        return f.session !== null && SESSION_ID.test(f.session);
      case 'cwd':
        return f.cwd !== '';
      case 'pid':
        return f.pid !== 0;
      case 'title':
        return f.title !== '';
    }
  });
}

function hasContextBound(action: ActionManifest): boolean {
  return action.when !== null && (action.when.contextPctMin !== null || action.when.contextPctMax !== null);
}

function whenHolds(action: ActionManifest, f: GateFacts): boolean {
  const w = action.when;
  if (w === null) return true;
  if (w.state.length > 0 && (f.state === null || !w.state.includes(f.state))) return false;
  if (w.detail.length > 0 && (f.detail === null || !w.detail.includes(f.detail))) return false;
  if (w.contextPctMin !== null || w.contextPctMax !== null) {
    if (f.contextPct === null) return false;
    if (w.contextPctMin !== null && f.contextPct < w.contextPctMin) return false;
    if (w.contextPctMax !== null && f.contextPct > w.contextPctMax) return false;
  }
  return true;
}

/** The first reason the action may not fire, or null when it may. */
export function gate(action: ActionManifest, f: GateFacts, opts: GateOptions): GateReason | null {
  if (!appliesTo(action, f.agent)) return 'wrong-agent';
  const checkWhen = action.when !== null && !opts.force;
  if (checkWhen && hasContextBound(action) && !opts.hasContextTelemetry) return 'no-coverage';
  if (!requirementsMet(action, f)) return 'requires-unmet';
  if (checkWhen && !whenHolds(action, f)) return 'gated';
  return null;
}

/** The API transport an agent answers through, if the action routes it there. */
export function apiTransportFor(action: ActionManifest, agent: string | null) {
  if (action.kind !== 'keys' || agent === null) return null;
  return action.api[agent] ?? null;
}

// Request ids and endpoints come from pane options any local process can write; anything that
// could smuggle a header or a second request line is refused rather than cleaned.
const REQUEST_ID = /^[A-Za-z0-9_.:-]+$/;
const ENDPOINT = /^http:\/\/[^\s\u0000-\u001f\u007f/?#]+(\/[^\s\u0000-\u001f\u007f?#]*)?$/;

export function validRequestId(id: string | null): id is string {
  return id !== null && REQUEST_ID.test(id);
}

/** Plain `http://host[:port][/path]` only: the lane is for a local agent's own server. */
export function validEndpoint(ep: string | null): ep is string {
  return ep !== null && ENDPOINT.test(ep);
}

/** The endpoint the pane announces, else the configured base for its agent. */
export function endpointFor(paneEndpoint: string | null, agent: string | null, apiBase: Readonly<Record<string, string>>): string | null {
  if (validEndpoint(paneEndpoint)) return paneEndpoint;
  const fallback = agent === null ? undefined : apiBase[agent];
  return validEndpoint(fallback ?? null) ? fallback! : null;
}

export type Lane = 'api' | 'keys';

/**
 * The keys a keys action sends to this agent on a pane showing this detail: the dialog's own
 * (`[dialog_keys.<agent>]`) where the manifest names some, else the agent's. null: none.
 */
export function keysFor(action: ActionManifest, agent: string | null, detail: string | null): string[] | null {
  if (action.kind !== 'keys' || agent === null) return null;
  const own = detail === null ? undefined : action.dialogKeys[agent]?.[detail];
  const keys = own ?? action.keys[agent];
  return keys !== undefined && keys.length > 0 ? keys : null;
}

/**
 * How a keys action answers this agent, one rule for every agent: over the agent's API when the
 * manifest routes it there and an endpoint is known for the pane (the reply names the request and
 * cannot hit another one), else with the agent's keys when the manifest lists some (bound to the
 * prompt seen on screen), else not at all. So an OpenCode started without its plugin, which
 * announces no endpoint, is answered with keys; one with the plugin only ever through its API.
 */
export function laneFor(action: ActionManifest, agent: string | null, endpoint: string | null): Lane | null {
  if (action.kind !== 'keys' || agent === null) return null;
  if (apiTransportFor(action, agent) !== null && endpoint !== null) return 'api';
  if ((action.keys[agent]?.length ?? 0) > 0) return 'keys';
  return null;
}

/** Lane preconditions (not skipped by --force): the API lane needs a request to name; no lane is no way in. */
export function apiPrecondition(action: ActionManifest, agent: string | null, permissionRequest: string | null, endpoint: string | null): GateReason | null {
  if (apiTransportFor(action, agent) === null) return null;
  const lane = laneFor(action, agent, endpoint);
  if (lane === null || (lane === 'api' && !validRequestId(permissionRequest))) return 'requires-unmet';
  return null;
}

/** Binders: the caller quoted what it saw; the pane must still show exactly that. */
export function binderRefusal(
  binders: { expectEpisodeMs?: number | null; expectPermissionRequest?: string | null; expectPrompt?: string | null },
  seen: { episodeMs: number | null; permissionRequest: string | null; promptId?: string | null },
): GateReason | null {
  if (binders.expectEpisodeMs != null && seen.episodeMs !== binders.expectEpisodeMs) return 'episode-changed';
  if (binders.expectPermissionRequest != null && seen.permissionRequest !== binders.expectPermissionRequest) return 'request-gone';
  if (binders.expectPrompt != null && (seen.promptId ?? null) !== binders.expectPrompt) return 'prompt-changed';
  return null;
}
