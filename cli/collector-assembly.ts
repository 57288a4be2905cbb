// One collector for this machine: every tmux server of the user (or the ones named), an engine
// each, and a publisher that turns their rows into protocol frames. `tma collector` attaches it to
// a WebSocket or stdio; `tma hub` attaches it to an in-process link.

import { randomBytes } from 'node:crypto';
import type { LineLog } from '../shared/log-level.js';
import type { ActResult } from '../shared/protocol.js';
import { Engine } from '../collector/engine/cycle.js';
import { intakeContext } from '../collector/engine/context-intake.js';
import { intakeEvent } from '../collector/engine/event-intake.js';
import { discover } from '../collector/fleet/discovery.js';
import { rowsWithRepos } from '../collector/repo-rows.js';
import { ServerEngines } from '../collector/fleet/engines.js';
import { Publisher, type ActRequest } from '../collector/fleet/publisher.js';
import { HostNotifier } from '../collector/notify/host-notifier.js';
import { HostSinks } from '../collector/notify/host-sinks.js';
import { NotifyOutbox, outboxPath } from '../collector/notify/outbox.js';
import { actionsByAgent } from '../collector/fleet/actions-by-agent.js';
import { remoteActHandler, remoteAllowed } from '../collector/fleet/remote-act.js';
import { remoteMuteHandler, remotePreviewHandler } from '../collector/fleet/remote-verbs.js';
import { canonicalSocketPath, listenWake, wakeDir, wakeSocketPath, type HookDelivery } from '../collector/fleet/wake.js';
import { quickReader } from '../collector/fleet/quick-read.js';
import { dropHookRequests, hookRequestsFor } from '../collector/act/hook-requests.js';
import { answerFromWire, takePermissionWait } from '../collector/engine/hook-lane-intake.js';

/** Hook events after which the agent no longer waits on a permission question. */
const MOVED_ON = new Set(['Stop', 'UserPromptSubmit', 'SessionEnd']);
import { loadActions } from '../collector/manifest-files.js';
import { OutputWatch } from '../collector/tmux/control-output.js';
import { readProcesses } from '../collector/tmux/proc-table.js';
import { openRunner } from '../collector/tmux/runner.js';
import { tmuxBin } from '../collector/tmux/target.js';
import type { Config } from '../collector/config/config-schema.js';
import type { ActionManifest } from '../collector/core/action-manifest.js';
import { type Parsed } from './args.js';
import { loadLocalConfig, loadManifestsFor } from './local.js';
import { VERSION } from './version.js';

/** How often a collector that watches output sweeps a server where nothing changes. */
export const IDLE_SWEEP_MS = 5000;

/**
 * The same while every session of the server has an attached output client: output, listing news
 * (windows, panes, layouts, sessions) and a client ending all wake the engine at once, so the
 * timed sweep is only a safety net. The reference's output-driven tier sweeps every 45 s.
 */
export const WATCHED_SWEEP_MS = 30_000;

export interface CollectorParts {
  config: Config;
  publisher: Publisher;
  engines: ServerEngines;
}

export interface AssembleOptions {
  host: string;
  intervalMs: number;
  /** The slow sweep once output is watched and nothing changes; default intervalMs. */
  idleMs?: number;
  /** The slow sweep while every session's output client is attached; default idleMs. */
  sweepMs?: number;
  env: NodeJS.ProcessEnv;
  log: LineLog;
  /** Runs a hub's act request on this host; default: the broker under the `[remote]` policy. */
  onAct?: (req: ActRequest, engines: ServerEngines) => Promise<ActResult>;
}

/**
 * Hidden, for tests only: TMA_COLLECTOR_HEARTBEAT_MS shortens the collector's heartbeat so a hub
 * started with a short heartbeat (and so a short dead-link timer) does not drop a quiet but healthy
 * link. Anything but a whole number of milliseconds ≥ 10 leaves the protocol's interval in force.
 */
export function heartbeatOverride(env: NodeJS.ProcessEnv): number | undefined {
  const raw = env.TMA_COLLECTOR_HEARTBEAT_MS;
  if (raw === undefined || !/^\d+$/.test(raw)) return undefined;
  const ms = Number(raw);
  return ms >= 10 ? ms : undefined;
}

/**
 * `[remote] share_prompt`: what a prompt asks travels to the hub unless the host turns it off,
 * so a person approving from the page or the fleet CLI sees what they approve.
 */
export function sharesPrompts(config: Pick<Config, 'remote'>): boolean {
  return config.remote.sharePrompt !== false;
}

export async function assembleCollector(p: Parsed, o: AssembleOptions): Promise<CollectorParts> {
  const { env, log, host } = o;
  const config = await loadLocalConfig(p, env);
  const set = await loadManifestsFor(p, config, env, log);
  const bin = tmuxBin(env, config.tmuxBin);
  const manifests = set.manifests;

  // Read per request, as `tma act` reads it per run; the hello announces what held at start.
  const actionSet = (): ActionManifest[] | string => {
    const a = loadActions({ env });
    return a.ok ? a.actions : a.issues.map((i) => `${i.file}: ${i.problem}`).join('; ');
  };
  const atStart = actionSet();
  if (typeof atStart === 'string') log(`no action can be fired remotely: ${atStart}`);

  // eslint-disable-next-line prefer-const -- assigned below, after the handlers that close over it
  let engines: ServerEngines;
  const remoteAct = remoteActHandler({
    host,
    policy: config.remote,
    loadActions: actionSet,
    engineFor: (server) => engines.engineFor(server),
    apiBase: config.apiBase,
    // The reference re-detects a keys stamp older than a fixed 3 s; we use the same staleness
    // window the fold uses ([fold] freshness_secs, default 3 s), so one knob governs both.
    freshnessMs: config.fold.freshnessMs,
    env,
    configPath: p.globals.config ?? null,
    log,
  });
  // Read once for both: the notifier's fleet events and the publisher's rows carry prompt text
  // under the same rule, so a hub's own collector cannot share it in one and withhold it in the other.
  const sharePrompt = sharesPrompts(config);
  const outbox = new NotifyOutbox({ log, file: outboxPath(env, host) });
  const notifier = new HostNotifier({
    settings: config.notify,
    sinks: new HostSinks({ settings: config.notify, env, log }),
    fleet: (ev) => outbox.add(ev),
    sharePrompt,
    log,
  });
  const verbDeps = {
    host,
    policy: config.remote,
    loadActions: actionSet,
    engineFor: (server: string) => engines.engineFor(server),
    apiBase: config.apiBase,
    sharePrompt,
    log,
  };
  const allowedActions = typeof atStart === 'string' ? [] : remoteAllowed(atStart, config.remote);
  const publisher = new Publisher({
    host,
    version: VERSION,
    epoch: randomBytes(16).toString('hex'),
    allowedActions,
    actionsByAgent: typeof atStart === 'string' ? {} : actionsByAgent(atStart, allowedActions),
    onAct: (req: ActRequest) => (o.onAct ? o.onAct(req, engines) : remoteAct(req)),
    onMute: remoteMuteHandler(verbDeps),
    onPreview: remotePreviewHandler(verbDeps),
    allowMute: config.remote.allowMute !== false,
    heartbeatMs: heartbeatOverride(env),
    log,
    sharePrompt,
    onLive: () => outbox.flush(),
    onNotifyAck: (ids) => outbox.ack(ids),
  });
  outbox.bind((frame) => publisher.sendLive(frame));
  engines = new ServerEngines({
    discover: (known) =>
      discover({
        known,
        names: p.globals['socket-name'] ?? [],
        paths: p.globals['socket-path'] ?? [],
        env,
      }),
    open: async (target) =>
      new Engine({
        runner: await openRunner(target, { mode: 'control', bin }),
        manifests,
        fold: config.fold,
        host,
        readProcs: readProcesses,
        env,
        warn: (l) => process.stderr.write(l),
      }),
    sink: publisher,
    intervalMs: o.intervalMs,
    idleMs: o.idleMs,
    sweepMs: o.sweepMs,
    // Often enough that a one-shot reader never finds the heartbeat older than the freshness window.
    heartbeatMs: config.fold.freshnessMs > 0 ? Math.max(250, Math.floor(config.fold.freshnessMs / 2)) : 0,
    enrich: rowsWithRepos,
    listenWake: async (socketPath, wake, engine) => {
      const path = wakeSocketPath(canonicalSocketPath(socketPath), wakeDir(env));
      // PermissionRequest hooks waiting on this server's panes: the hook lane's one registry.
      const requests = hookRequestsFor(canonicalSocketPath(socketPath), true)!;
      const lane = { runner: engine.runner, manifests, requests, wake, log };
      // A hook's event, stamped here exactly as `tma event` would stamp it; an agent this collector
      // has no manifest for (e.g. one added since it started) is refused, so the hook stamps itself.
      const onEvent = async (ev: HookDelivery): Promise<boolean> => {
        // Whatever becomes of it, a state hook spoke for this pane (a context feed proves nothing
        // about the hooks): its quiet edges need no capture while its claim is fresh.
        if (ev.kind !== 'context') engine.hookEvent(ev.pane);
        if (!manifests.some((m) => m.name === ev.agent)) return false;
        // The agent moved past the question: a hook still waiting there has nothing left to answer.
        if (MOVED_ON.has(ev.kind)) requests.withdraw(ev.pane, 'moved-on');
        // A telemetry payload (pi's context event) feeds the gauge, not the hook map.
        if (ev.kind === 'context') {
          const ctx = await intakeContext({ runner: engine.runner, manifests, ...ev, now: Date.now() });
          if (ctx.commands.length > 0) wake();
          return true;
        }
        const out = await intakeEvent({ runner: engine.runner, manifests, ...ev, now: Date.now() });
        if (out.decision === 'no-manifest') return false;
        if (out.commands.length > 0) wake();
        return true;
      };
      // Screens seen as they change: a pane that painted and went quiet is looked at now.
      const watch = new OutputWatch({
        target: { kind: 'path', path: socketPath },
        bin,
        env,
        runner: engine.runner,
        log,
        onDue: (panes) => {
          engine.markPainted(panes);
          wake();
        },
        // A pane, window or session came or went, or an output client ended: look now.
        onChange: wake,
      });
      await watch.start();
      // While output is watched, static panes are neither captured nor re-stamped every cycle.
      engine.watchOutput(() => watch.sessions().length > 0);
      let l: { close(): void } | null = null;
      try {
        l = await listenWake(path, wake, {
          onEvent,
          history: () => JSON.stringify(engine.transitions.document()),
          // The quick `tma status` reads through this collector's own control client instead of spawning tmux.
          quickRead: quickReader(engine.runner),
          onPermission: (w, held, answer, onGone) => void takePermissionWait(lane, w, held, answer, onGone),
          onAnswer: (a) => answerFromWire(requests, a),
        });
        if (!l) log(`another collector answers hook wake-ups for ${socketPath}; this one sees them on its poll`);
      } catch (e) {
        log(`no hook wake-ups for ${socketPath}: ${(e as Error).message}`);
      }
      return {
        close: () => {
          watch.close();
          l?.close();
          dropHookRequests(canonicalSocketPath(socketPath));
        },
        healthy: () => watch.healthy(),
      };
    },
    log,
    afterCycle: (engine, res, rows, server) => notifier.afterCycle(engine, res, rows, server),
  });
  return { config, publisher, engines };
}
