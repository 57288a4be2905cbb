// One collector for this machine: every tmux server of the user (or the ones named), an engine
// each, and a publisher that turns their rows into protocol frames. `tma collector` attaches it to
// a WebSocket or stdio; `tma hub` attaches it to an in-process link.

import { randomBytes } from 'node:crypto';
import type { ActResult } from '../shared/protocol.js';
import { applyAgentConfig } from '../collector/core/manifest-load.js';
import { Engine } from '../collector/engine/cycle.js';
import { repoOf } from '../collector/engine/repo.js';
import { discover } from '../collector/fleet/discovery.js';
import { ServerEngines } from '../collector/fleet/engines.js';
import { Publisher, type ActRequest } from '../collector/fleet/publisher.js';
import { canonicalSocketPath, listenWake, wakeDir, wakeSocketPath } from '../collector/fleet/wake.js';
import { loadAgentManifests } from '../collector/manifest-files.js';
import { readProcesses } from '../collector/tmux/proc-table.js';
import { openRunner } from '../collector/tmux/runner.js';
import { tmuxBin } from '../collector/tmux/target.js';
import type { Config } from '../collector/config/config-schema.js';
import { str, type Parsed } from './args.js';
import { ExitError, loadLocalConfig } from './local.js';
import { VERSION } from './version.js';

export interface CollectorParts {
  config: Config;
  publisher: Publisher;
  engines: ServerEngines;
}

export interface AssembleOptions {
  host: string;
  intervalMs: number;
  env: NodeJS.ProcessEnv;
  log: (line: string) => void;
  /** Runs a hub's act request on this host; wired where the broker lives. */
  onAct?: (req: ActRequest, engines: ServerEngines) => Promise<ActResult>;
}

export function assembleCollector(p: Parsed, o: AssembleOptions): CollectorParts {
  const { env, log, host } = o;
  const config = loadLocalConfig(p, env);
  let set;
  try {
    set = applyAgentConfig(loadAgentManifests({ manifestDir: str(p.globals['manifest-dir']), env }), config.agents);
  } catch (e) {
    throw new ExitError(`manifests could not be loaded: ${(e as Error).message}`, 1);
  }
  for (const i of set.issues) log(`skipping manifest ${i.file}: ${i.problem}`);
  if (set.manifests.length === 0) throw new ExitError('no agent manifest could be loaded', 1);
  const bin = tmuxBin(env, config.tmuxBin);
  const manifests = set.manifests;

  let engines: ServerEngines;
  const publisher = new Publisher({
    host,
    version: VERSION,
    epoch: randomBytes(16).toString('hex'),
    allowedActions: config.remote.allowActions ?? [],
    ...(o.onAct ? { onAct: (req: ActRequest) => o.onAct!(req, engines) } : {}),
    log,
  });
  engines = new ServerEngines({
    discover: () =>
      discover({
        names: (p.globals['socket-name'] as string[] | undefined) ?? [],
        paths: (p.globals['socket-path'] as string[] | undefined) ?? [],
        env,
      }),
    open: async (target) =>
      new Engine({
        runner: await openRunner(target, { mode: 'control', bin }),
        manifests,
        fold: config.fold,
        host,
        readProcs: readProcesses,
      }),
    sink: publisher,
    intervalMs: o.intervalMs,
    enrich: (res) => {
      const cwd = new Map(res.panes.map((r) => [r.rec.paneId, r.rec.currentPath]));
      return Promise.all(res.rows.map(async (r) => ({ ...r, ...(await repoOf(cwd.get(r.pane) ?? '')) })));
    },
    listenWake: async (socketPath, wake) => {
      const path = wakeSocketPath(canonicalSocketPath(socketPath), wakeDir(env));
      try {
        const l = await listenWake(path, wake);
        if (!l) log(`another collector answers hook wake-ups for ${socketPath}; this one sees them on its poll`);
        return l;
      } catch (e) {
        log(`no hook wake-ups for ${socketPath}: ${(e as Error).message}`);
        return null;
      }
    },
    log,
  });
  return { config, publisher, engines };
}
