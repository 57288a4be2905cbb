// The lane a keys action answers an agent through: one rule for every agent (the API when the
// pane names a request at a known endpoint, else the agent's keys), which the broker, the dry
// run and doctor's approve_reachable all read.

import { describe, expect, it } from 'vitest';
import { loadActionSet, parseActionManifest, type ActionManifest } from '../../collector/core/action-manifest.js';
import { apiPrecondition, fireLane, laneFor } from '../../collector/act/gate.js';
import { approveLane } from '../../collector/act/approve-reach.js';
import { bundledActionDir, readManifestFiles } from '../../collector/manifest-files.js';

function action(body: string): ActionManifest {
  return parseActionManifest({ path: '/x/poke.toml', text: `min_engine_version = "0.4.0"\nname = "poke"\nlabel = "L"\nkind = "keys"\n${body}` });
}

const API = 'opencode = { op = "permission-reply", reply = "once" }';
const both = action(`[keys]\nclaude = ["1"]\nopencode = ["Enter"]\n[api]\n${API}\n`);
const apiOnly = action(`[keys]\nclaude = ["1"]\n[api]\n${API}\n`);
const EP = 'http://127.0.0.1:4096';

describe('laneFor / fireLane', () => {
  it('the API whenever the pane names a request at a known endpoint', () => {
    expect(fireLane(both, 'opencode', 'per_1', EP)).toBe('api');
    expect(fireLane(apiOnly, 'opencode', 'per_1', EP)).toBe('api');
  });

  it('the keys when no endpoint is known, or no usable request is named', () => {
    expect(fireLane(both, 'opencode', 'per_1', null)).toBe('keys');
    expect(fireLane(both, 'opencode', null, EP)).toBe('keys');
    expect(fireLane(both, 'opencode', 'per\r\nX: y', EP)).toBe('keys');
    expect(fireLane(both, 'claude', 'per_1', EP)).toBe('keys');
  });

  it('no lane for an agent routed to the API alone without one, or with no transport at all', () => {
    expect(fireLane(apiOnly, 'opencode', null, EP)).toBeNull();
    expect(fireLane(apiOnly, 'opencode', 'per_1', null)).toBeNull();
    expect(fireLane(both, 'gemini', 'per_1', EP)).toBeNull();
    expect(laneFor(both, null, true)).toBeNull();
  });

  it('requires-unmet only where no lane is left', () => {
    expect(apiPrecondition(both, 'opencode', null, null)).toBeNull();
    expect(apiPrecondition(apiOnly, 'opencode', null, null)).toBe('requires-unmet');
    expect(apiPrecondition(apiOnly, 'opencode', 'per_1', EP)).toBeNull();
  });
});

describe("doctor's approve_reachable agrees with the broker (bundled actions)", () => {
  const set = loadActionSet(readManifestFiles(bundledActionDir()), []);
  if (!set.ok) throw new Error(JSON.stringify(set.issues));
  const actions = set.actions;
  const approve = actions.find((a) => a.name === 'approve')!;

  it('an OpenCode without its plugin (no endpoint) is reached with keys, as a fire would answer it', () => {
    expect(approveLane(actions, 'opencode', null, {})).toEqual({ lane: 'keys', reachable: true, reason: null, endpoint: null });
    expect(fireLane(approve, 'opencode', null, null)).toBe('keys');
  });

  it('an OpenCode whose plugin announced an endpoint (or one configured) is reached over the API', () => {
    expect(approveLane(actions, 'opencode', EP, {})).toMatchObject({ lane: 'api', reachable: true, endpoint: EP });
    expect(approveLane(actions, 'opencode', null, { opencode: EP })).toMatchObject({ lane: 'api', endpoint: EP });
    expect(fireLane(approve, 'opencode', 'per_1', EP)).toBe('api');
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
