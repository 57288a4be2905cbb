// The lane a keys action answers an agent through: one rule for every agent (the API when an
// endpoint is known for the pane, else the agent's keys), which the broker, the dry
// run and doctor's approve_reachable all read.

import { describe, expect, it } from 'vitest';
import { loadActionSet, parseActionManifest, type ActionManifest } from '../../collector/core/action-manifest.js';
import { apiPrecondition, laneFor } from '../../collector/act/gate.js';
import { approveLane } from '../../collector/act/approve-reach.js';
import { bundledActionDir, readManifestFiles } from '../../collector/manifest-files.js';

function action(body: string): ActionManifest {
  return parseActionManifest({ path: '/x/poke.toml', text: `min_engine_version = "0.4.0"\nname = "poke"\nlabel = "L"\nkind = "keys"\n${body}` });
}

const API = 'opencode = { op = "permission-reply", reply = "once" }';
const both = action(`[keys]\nclaude = ["1"]\nopencode = ["Enter"]\n[api]\n${API}\n`);
const apiOnly = action(`[keys]\nclaude = ["1"]\n[api]\n${API}\n`);
const EP = 'http://127.0.0.1:4096';

describe('laneFor', () => {
  it('the API whenever an endpoint is known for the pane', () => {
    expect(laneFor(both, 'opencode', EP)).toBe('api');
    expect(laneFor(apiOnly, 'opencode', EP)).toBe('api');
  });

  it('the keys when no endpoint is known, and for agents the API does not answer', () => {
    expect(laneFor(both, 'opencode', null)).toBe('keys');
    expect(laneFor(both, 'claude', EP)).toBe('keys');
  });

  it('no lane for an agent routed to the API alone without an endpoint, or with no transport', () => {
    expect(laneFor(apiOnly, 'opencode', null)).toBeNull();
    expect(laneFor(both, 'gemini', EP)).toBeNull();
    expect(laneFor(both, null, EP)).toBeNull();
  });

  it('requires-unmet where no lane is left, or the API lane has no request to name', () => {
    expect(apiPrecondition(both, 'opencode', null, null)).toBeNull();
    expect(apiPrecondition(both, 'opencode', 'per_1', EP)).toBeNull();
    // An endpoint is known (the plugin runs) but no request is named: never keys instead.
    expect(apiPrecondition(both, 'opencode', null, EP)).toBe('requires-unmet');
    expect(apiPrecondition(both, 'opencode', 'per\r\nX: y', EP)).toBe('requires-unmet');
    expect(apiPrecondition(apiOnly, 'opencode', 'per_1', null)).toBe('requires-unmet');
  });
});

describe("doctor's approve_reachable agrees with the broker (bundled actions)", () => {
  const set = loadActionSet(readManifestFiles(bundledActionDir()), []);
  if (!set.ok) throw new Error(JSON.stringify(set.issues));
  const actions = set.actions;
  const approve = actions.find((a) => a.name === 'approve')!;

  it('an OpenCode without its plugin (no endpoint) is reached with keys, as a fire would answer it', () => {
    expect(approveLane(actions, 'opencode', null, {})).toEqual({ lane: 'keys', reachable: true, reason: null, endpoint: null });
    expect(laneFor(approve, 'opencode', null)).toBe('keys');
  });

  it('an OpenCode whose plugin announced an endpoint (or one configured) is reached over the API', () => {
    expect(approveLane(actions, 'opencode', EP, {})).toMatchObject({ lane: 'api', reachable: true, endpoint: EP });
    expect(approveLane(actions, 'opencode', null, { opencode: EP })).toMatchObject({ lane: 'api', endpoint: EP });
    expect(laneFor(approve, 'opencode', EP)).toBe('api');
  });

  it('every agent that asks permission has a way in; pi has none', () => {
    for (const agent of ['claude', 'codex', 'gemini', 'opencode']) expect(approveLane(actions, agent, null, {}).reachable, agent).toBe(true);
    expect(approveLane(actions, 'pi', null, {})).toMatchObject({ lane: null, reachable: false });
  });

  it('an API-only action without an endpoint says why', () => {
    const only = { ...apiOnly, name: 'approve' };
    expect(approveLane([only], 'opencode', null, {})).toMatchObject({ lane: 'api', reachable: false });
  });
});
