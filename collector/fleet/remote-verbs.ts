// A hub's mute and preview (dry-run) requests, answered on this host. Both re-read the pane here,
// where the truth is: a preview judges the stamp as `tma act --dry-run` does (and the binders the
// caller saw, as a fire would), and sends nothing; a mute writes the same option `tma mute` writes.
// A host refuses remote mutes with `[remote] allow_mute = false`.

import type { ActionManifest } from '../core/action-manifest.js';
import { processAlive } from '../act/broker.js';
import { readPaneFacts, type PaneFacts } from '../act/facts.js';
import { binderRefusal, endpointFor, laneFor } from '../act/gate.js';
import { MUTE_SENTINEL, muteUntil } from '../act/mute-duration.js';
import { fireability, type PreviewContext } from '../act/preview.js';
import { chain } from '../core/stamp-render.js';
import { KEY } from '../core/store-codec.js';
import type { Engine } from '../engine/cycle.js';
import type { MuteResult, PreviewResult } from '../../shared/protocol.js';
import type { MuteRequest, PreviewRequest } from './publisher.js';
import { remoteRefusal, type RemotePolicy } from './remote-act.js';

export interface RemoteVerbDeps {
  host: string;
  policy: RemotePolicy & { allowMute?: boolean };
  loadActions: () => ActionManifest[] | string;
  engineFor: (server: string) => Engine | null;
  apiBase: Readonly<Record<string, string>>;
  /** `[remote] share_prompt`: what a prompt asks goes to the hub only when true. */
  sharePrompt: boolean;
  log: (line: string) => void;
  now?: () => number;
}

/** The lane and keys a fire would use: never an endpoint (its path is a secret of the pane). */
function laneOf(
  action: ActionManifest,
  f: PaneFacts,
  apiBase: Readonly<Record<string, string>>,
): { lane: 'keys' | 'api' | 'exec' | null; keys: string[] | null } {
  if (action.kind === 'exec') return { lane: 'exec', keys: null };
  const lane = laneFor(action, f.agent, endpointFor(f.apiEndpoint, f.agent, apiBase));
  return { lane, keys: lane === 'keys' ? [...action.keys[f.agent!]!] : null };
}

export function remotePreviewHandler(d: RemoteVerbDeps): (req: PreviewRequest) => Promise<PreviewResult> {
  return async (req) => {
    const base = { schema: 1 as const, host: d.host, server: req.server, pane: req.pane };
    const none = (reason: string): PreviewResult => ({
      ...base,
      found: false,
      agent: null,
      state: null,
      prompt_id: null,
      pending_summary: null,
      actions: req.actions.map((name) => ({ name, fireable: false, reason, lane: null, keys: null })),
    });
    const loaded = d.loadActions();
    if (typeof loaded === 'string') return none('actions-unusable');
    const engine = d.engineFor(req.server);
    if (engine === null) return none('pane-gone');
    const f = await readPaneFacts(engine.runner, req.pane);
    if (f === null) return none('pane-gone');
    const ctx: PreviewContext = { engine, apiBase: d.apiBase, now: (d.now ?? Date.now)(), pidAlive: processAlive };
    const binders = { expectEpisodeMs: req.expect_episode_ms, expectPermissionRequest: req.expect_permission_request, expectPrompt: req.expect_prompt };
    const actions = req.actions.map((name) => {
      const action = loaded.find((a) => a.name === name);
      // The host's own policy first: an action a hub may not fire is refused whatever the pane shows.
      if (!action || remoteRefusal(action, d.policy) !== null) return { name, fireable: false, reason: 'not-allowed', lane: null, keys: null };
      const reason = fireability(action, f, ctx) ?? binderRefusal(binders, f);
      return { name, fireable: reason === null, reason, ...laneOf(action, f, d.apiBase) };
    });
    d.log(`remote preview ${JSON.stringify({ who: req.principal, server: req.server, pane: req.pane, actions: req.actions })}`);
    return {
      ...base,
      found: true,
      agent: f.agent,
      state: f.state,
      prompt_id: f.promptId ?? null,
      pending_summary: d.sharePrompt ? (f.pendingSummary ?? null) : null,
      actions,
    };
  };
}

export function remoteMuteHandler(d: RemoteVerbDeps): (req: MuteRequest) => Promise<MuteResult> {
  return async (req) => {
    const answer = (outcome: string, exit_code: number, reason: string | null, until_ms: number | null = null): MuteResult => ({
      schema: 1,
      pane: req.pane,
      outcome,
      exit_code,
      reason,
      until_ms,
      host: d.host,
      server: req.server,
    });
    let result: MuteResult;
    const engine = d.policy.allowMute === false ? null : d.engineFor(req.server);
    if (d.policy.allowMute === false) result = answer('refused', 4, 'not-allowed');
    else if (engine === null || (await readPaneFacts(engine.runner, req.pane)) === null) result = answer('vanished', 3, 'pane-gone');
    else {
      // The host's clock sets the end, as a local `tma mute --for` would.
      const until = req.for_ms === null ? MUTE_SENTINEL : muteUntil((d.now ?? Date.now)(), req.for_ms);
      const cmd = req.clear ? ['set-option', '-p', '-u', '-t', req.pane, KEY.muteUntil] : ['set-option', '-p', '-t', req.pane, KEY.muteUntil, String(until)];
      await engine.runner.run(chain([cmd]));
      result = req.clear ? answer('unmuted', 0, null) : answer('muted', 0, null, req.for_ms === null ? null : until);
    }
    d.log(
      `remote mute ${JSON.stringify({ who: req.principal, server: req.server, pane: req.pane, for_ms: req.for_ms, clear: req.clear, outcome: result.outcome })}`,
    );
    return result;
  };
}
