// The act broker as a collector runs it: in this process, over one control-mode client to a
// scratch tmux server, with the bundled agents and actions. No CLI start-up between two fires, so
// a test can act inside a window a fresh process would miss.

import { fireAction, type FireOptions } from '../../collector/act/broker.js';
import type { ActResult } from '../../collector/act/outcome.js';
import { Engine } from '../../collector/engine/cycle.js';
import { loadActions, loadAgentManifests } from '../../collector/manifest-files.js';
import { readProcesses } from '../../collector/tmux/proc-table.js';
import { openRunner } from '../../collector/tmux/runner.js';
import { DEFAULT_FOLD } from '../../collector/core/types.js';

export interface Broker {
  engine: Engine;
  fire(action: string, pane: string, more?: Partial<FireOptions>): Promise<ActResult>;
  close(): void;
}

export async function openBroker(socketName: string, env: NodeJS.ProcessEnv): Promise<Broker> {
  const runner = await openRunner({ kind: 'name', name: socketName }, { mode: 'control', bin: 'tmux' });
  const engine = new Engine({ runner, manifests: loadAgentManifests({ env: {} }).manifests, fold: DEFAULT_FOLD, host: 'test', readProcs: readProcesses });
  const set = loadActions({ env: {} });
  if (!set.ok) throw new Error('bundled actions did not load');
  return {
    engine,
    fire: (name, pane, more = {}) => {
      const action = set.actions.find((a) => a.name === name);
      if (!action) throw new Error(`no action ${name}`);
      return fireAction({ runner, engine, action, pane, env, stdio: 'ignore', ...more });
    },
    close: () => runner.close(),
  };
}
