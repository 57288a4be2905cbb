// What a hub may offer on each agent's panes: of the actions this host opens to a hub, the ones
// that have a way to reach that agent. A page that knows this does not show an Approve the host
// would refuse as wrong-agent (a pane of an agent with no keys for it; an agent answered by API alone).

import type { ActionManifest } from '../core/action-manifest.js';
import type { ActionLane } from '../../shared/protocol.js';

/** agent → action → lane; "*" holds exec actions that list no agents (they apply to any). */
export function actionsByAgent(actions: readonly ActionManifest[], allowed: readonly string[]): Record<string, Record<string, ActionLane>> {
  const out: Record<string, Record<string, ActionLane>> = {};
  const put = (agent: string, action: string, lane: ActionLane) => {
    (out[agent] ??= {})[action] = lane;
  };
  for (const a of actions) {
    if (!allowed.includes(a.name)) continue;
    if (a.kind === 'keys') {
      // An agent with keys may be reached whatever the pane names (the broker takes the API when
      // an endpoint is known for the pane, else the keys: gate.ts laneFor; the endpoint never
      // leaves the host, and its gate stands behind the button); "api" is the API alone, which
      // needs the pane's request.
      for (const agent of Object.keys(a.api)) put(agent, a.name, 'api');
      for (const agent of Object.keys(a.keys)) put(agent, a.name, 'keys');
    } else {
      for (const agent of a.agents.length ? a.agents : ['*']) put(agent, a.name, 'exec');
    }
  }
  return out;
}
