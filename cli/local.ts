// Wiring for verbs that work on one local tmux server: config, manifests, the tmux target, a
// runner and an engine. Errors that end the verb become exit codes here, in one place.

import { safeLines } from '../shared/terminal-text.js';
import { ConfigError, type Config } from '../collector/config/config-types.js';
import { loadConfig } from '../collector/config/load-config.js';
import { applyAgentConfig } from '../collector/core/agent-config.js';
import type { ManifestIssue, ManifestSet } from '../collector/core/types.js';
import { Engine, type CycleResult } from '../collector/engine/cycle.js';
import { loadAgentManifestsCached, serializeSet } from '../collector/manifest-cache.js';
import { TmuxError } from '../collector/tmux/errors.js';
import { hostName } from '../collector/tmux/host.js';
import { readProcesses } from '../collector/tmux/proc-table.js';
import { openRunner } from '../collector/tmux/runner.js';
import { resolveTarget, TargetConflictError, tmuxBin, type ServerTarget } from '../collector/tmux/target.js';
import { UsageError, type Parsed } from './args.js';

/** An error that ends a verb with this exit code after printing its message. */
export class ExitError extends Error {
  constructor(
    message: string,
    readonly code: number,
  ) {
    super(message);
  }
}

export interface Local {
  config: Config;
  engine: Engine;
  target: ServerTarget;
  manifestIssues: ManifestIssue[];
  /**
   * Long-running verbs call this before each cycle: config and manifests are read again, and a
   * change takes effect from this cycle on. A broken file is told once and the last good set kept.
   */
  reload(): Promise<void>;
  close(): void;
}

export function targetOf(p: Parsed, env: NodeJS.ProcessEnv = process.env): ServerTarget {
  const names = p.globals['socket-name'] ?? [];
  const paths = p.globals['socket-path'] ?? [];
  if (names.length > 1 || paths.length > 1) throw new UsageError('give one --socket-name or --socket-path');
  try {
    return resolveTarget({ socketName: names[0], socketPath: paths[0], env });
  } catch (e) {
    if (e instanceof TargetConflictError) throw new UsageError(e.message);
    throw e;
  }
}

export async function loadLocalConfig(p: Parsed, env: NodeJS.ProcessEnv = process.env): Promise<Config> {
  try {
    return await loadConfig(p.globals.config, env);
  } catch (e) {
    if (e instanceof ConfigError) throw new ExitError(e.message, 1);
    throw e;
  }
}

/** Bundled and user manifests (or --manifest-dir), adjusted by config; skipped files are told. */
export async function loadManifestsFor(p: Parsed, config: Config, env: NodeJS.ProcessEnv, log: (line: string) => void): Promise<ManifestSet> {
  let set: ManifestSet;
  try {
    set = applyAgentConfig(await loadAgentManifestsCached({ manifestDir: p.globals['manifest-dir'], env }), config.agents);
  } catch (e) {
    throw new ExitError(`manifests could not be loaded: ${(e as Error).message}`, 1);
  }
  for (const i of set.issues) log(`skipping manifest ${i.file}: ${i.problem}`);
  // An empty set (an empty --manifest-dir, every agent disabled) is a set like any other: no
  // pane is recognised, but verbs still run and act still answers what is already stamped.
  return set;
}

export async function openLocal(
  p: Parsed,
  opts: { mode?: 'spawn' | 'control'; quietManifests?: boolean; firstListing?: readonly string[]; target?: ServerTarget } = {},
): Promise<Local> {
  const env = process.env;
  const target = opts.target ?? targetOf(p, env);
  const config = await loadLocalConfig(p, env);
  const set = await loadManifestsFor(p, config, env, opts.quietManifests ? () => undefined : (l) => process.stderr.write(`tma: ${l}\n`));
  const runner = await openRunner(target, { mode: opts.mode ?? 'spawn', bin: tmuxBin(env, config.tmuxBin) });
  const host = hostName();
  const engineFor = (c: Config, s: ManifestSet, firstListing?: readonly string[]) =>
    new Engine({ runner, manifests: s.manifests, fold: c.fold, host, readProcs: readProcesses, firstListing, env, warn: (l) => process.stderr.write(l) });
  let loaded = `${JSON.stringify(config)}\n${serializeSet(set)}`;
  let told: string | null = null;
  const local: Local = {
    config,
    engine: engineFor(config, set, opts.firstListing),
    target,
    manifestIssues: set.issues,
    close: () => runner.close(),
    reload: async () => {
      let c: Config;
      let s: ManifestSet;
      try {
        c = await loadLocalConfig(p, env);
        s = await loadManifestsFor(p, c, env, () => undefined);
      } catch (e) {
        if (!(e instanceof ExitError)) throw e;
        if (told !== e.message) process.stderr.write(`tma: ${e.message} (keeping the last good configuration)\n`);
        told = e.message;
        return;
      }
      told = null;
      const now = `${JSON.stringify(c)}\n${serializeSet(s)}`;
      if (now === loaded) return;
      // A new engine on the same tmux connection: its fold and manifests are fixed at birth.
      loaded = now;
      local.config = c;
      local.manifestIssues = s.issues;
      local.engine = engineFor(c, s);
    },
  };
  return local;
}

/**
 * Run a verb body, turning the errors every local verb shares into messages and exit codes. A
 * server that is not running is told with `hint` (where agents do run; cli/servers.ts).
 */
export async function guard(body: () => Promise<number>, hint?: () => Promise<string>): Promise<number> {
  try {
    return await body();
  } catch (e) {
    if (e instanceof UsageError) throw e;
    if (e instanceof ExitError) {
      // Often built from what a hub or host said: shown, never acted on by the terminal.
      process.stderr.write(`tma: ${safeLines(e.message)}\n`);
      return e.code;
    }
    if (e instanceof TmuxError) {
      // A failure tmux explained already reads `tmux: <its stderr>`; others are named as tmux's.
      const gone = e.kind === 'server-gone' ? `no tmux server running${hint ? await hint().catch(() => '') : ''}` : null;
      const text = gone ?? (e.message.startsWith('tmux') ? e.message : `tmux: ${e.message}`);
      process.stderr.write(`tma: ${text}\n`);
      return 1;
    }
    throw e;
  }
}

/**
 * One cycle, timed on stderr under `--debug-timing` (honoured by `ls` and `status`): the wall
 * time and how each pane was handled, so a slow status bar can be told from a slow tmux.
 */
export async function timedCycle(p: Parsed, engine: Engine): Promise<CycleResult> {
  if (!p.globals['debug-timing']) return engine.cycle();
  const t0 = performance.now();
  const res = await engine.cycle();
  const ms = performance.now() - t0;
  const paths = new Map<string, number>();
  for (const o of res.panes) paths.set(o.path, (paths.get(o.path) ?? 0) + 1);
  const how = [...paths].map(([k, n]) => `${n} ${k}`).join(', ');
  process.stderr.write(`tma: cycle: ${ms.toFixed(1)} ms, ${res.panes.length} pane(s)${how ? ` (${how})` : ''}, ${res.rows.length} agent(s)\n`);
  return res;
}
