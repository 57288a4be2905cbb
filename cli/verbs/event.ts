// `tma event`: hook intake. Whatever happens, it is silent and exits 0 — an agent's hook must
// never fail or print because of us.

import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { DEFAULT_CONFIG, type Config } from '../../collector/config/config-types.js';
import { fromEventEnabled } from '../../collector/notify/trigger.js';
import { loadConfig } from '../../collector/config/load-config.js';
import { applyAgentConfig } from '../../collector/core/agent-config.js';
import { intakeContext } from '../../collector/engine/context-intake.js';
import { intakeEvent } from '../../collector/engine/event-intake.js';
import { loadAgentManifestsCached } from '../../collector/manifest-cache.js';
import { openRunner, type TmuxRunner } from '../../collector/tmux/runner.js';
import { tmuxBin, type ServerTarget } from '../../collector/tmux/target.js';
import { type Parsed } from '../args.js';
import type { EVENT } from '../verb-flags.js';

/** Which server the hook belongs to: flags, then TMA_SOCKET_PATH, then the pane's own $TMUX. */
function hookTarget(p: Parsed, env: NodeJS.ProcessEnv): ServerTarget {
  const name = p.globals['socket-name']?.[0];
  const path = p.globals['socket-path']?.[0];
  if (name) return { kind: 'name', name };
  if (path) return { kind: 'path', path };
  if (env.TMA_SOCKET_PATH) return { kind: 'path', path: env.TMA_SOCKET_PATH };
  const fromTmux = env.TMUX?.split(',')[0];
  return fromTmux ? { kind: 'path', path: fromTmux } : { kind: 'default' };
}

function readPayload(arg: string | undefined): string {
  try {
    if (arg === undefined) return '';
    return readFileSync(arg === '-' ? 0 : arg, 'utf8');
  } catch {
    return '';
  }
}

/**
 * The hook rings itself. Any failure here is swallowed: the collector's notifier is the fallback
 * (the marker is only written right before a ring, so an episode that did not ring stays due).
 */
async function ringInline(
  runner: TmuxRunner,
  target: ServerTarget,
  env: NodeJS.ProcessEnv,
  o: { pane: string; agent: string; settings: Config['notify'] },
): Promise<void> {
  try {
    const wake = await import('../../collector/fleet/wake.js');
    const { fireFromEvent } = await import('../../collector/notify/event-fire.js');
    const { HostSinks } = await import('../../collector/notify/host-sinks.js');
    const sinks = new HostSinks({ settings: o.settings, env, detach: true });
    await fireFromEvent({
      runner,
      pane: o.pane,
      agent: o.agent,
      settings: o.settings,
      sinks,
      server: wake.canonicalSocketPath(wake.socketPathOfTarget(target, env)),
      host: hostname(),
      now: Date.now(),
    });
    // Only the hand-off of the payload is waited for, never the command itself.
    await sinks.handedOff(500);
  } catch {
    // Silent by contract.
  }
}

/** The default wait of a PermissionRequest hook for an answer through tma: see docs/answering.md. */
export const DEFAULT_HOOK_WAIT_MS = 60_000;

/** `TMA_HOOK_WAIT_SECS` (1 to 600) or the default; anything else is the default. */
export function hookWaitMs(env: NodeJS.ProcessEnv): number {
  const raw = env.TMA_HOOK_WAIT_SECS;
  const secs = raw !== undefined && /^\d+(\.\d+)?$/.test(raw.trim()) ? Number(raw) : NaN;
  return secs >= 1 && secs <= 600 ? Math.round(secs * 1000) : DEFAULT_HOOK_WAIT_MS;
}

/**
 * `--answer` on a PermissionRequest hook: hand the request to the collector and wait for an
 * answer through tma. True when the collector took it (it stamped the pane); the decision, if
 * any, is printed in the agent's hook wire. False: nobody took it, the hook stamps by itself.
 */
async function answerThroughCollector(p: Parsed<typeof EVENT>, env: NodeJS.ProcessEnv, agent: string, pane: string): Promise<boolean> {
  const payload = readPayload(p.opts.payload);
  const wake = await import('../../collector/fleet/wake.js');
  const { waitForHookAnswer } = await import('../../collector/fleet/hook-wait.js');
  const path = wake.wakeSocketPath(wake.canonicalSocketPath(wake.socketPathOfTarget(hookTarget(p, env), env)), wake.wakeDir(env));
  const end = await waitForHookAnswer(path, { agent, pane, payload, waitMs: hookWaitMs(env) });
  if (end.kind === 'not-taken') {
    stashedPayload = payload;
    return false;
  }
  if (end.kind === 'answer') {
    const { permissionWire } = await import('../../collector/act/hook-requests.js');
    process.stdout.write(`${permissionWire(end.behavior)}\n`);
  }
  return true;
}

/** The payload read for the hook lane, kept for the stamp when the collector did not take it. */
let stashedPayload: string | null = null;

export async function main(p: Parsed<typeof EVENT>): Promise<number> {
  const env = process.env;
  const agent = p.opts.agent;
  const kind = p.opts.kind;
  // Telemetry feeders (a statusline shim) may name the pane; hooks always run inside it.
  const pane = (kind === 'context' ? p.opts.pane : undefined) || env.TMUX_PANE;
  if (!agent || !kind || !pane) return 0;
  try {
    if (p.opts.answer === true && kind === 'PermissionRequest' && (await answerThroughCollector(p, env, agent, pane))) return 0;
  } catch {
    // Silent by contract: the agent shows its own dialog.
  }
  try {
    let config;
    try {
      config = await loadConfig(p.globals.config, env);
    } catch {
      config = null; // a broken config must not cost the agent its hook
    }
    const set = await loadAgentManifestsCached({ manifestDir: p.globals['manifest-dir'], env });
    const manifests = applyAgentConfig(set, config?.agents ?? []).manifests;
    if (!manifests.some((m) => m.name === agent)) return 0;
    const payload = stashedPayload ?? readPayload(p.opts.payload);
    const target = hookTarget(p, env);
    const runner = await openRunner(target, { mode: 'spawn', bin: tmuxBin(env, config?.tmuxBin) });
    let wrote = false;
    const fromEvent = fromEventEnabled(env, config?.notify.fromEvent);
    const notify = config?.notify ?? { ...DEFAULT_CONFIG.notify };
    try {
      const input = { runner, manifests, agent, kind, pane, payload, now: Date.now(), notify: { fromEvent, on: notify.on } };
      if (kind === 'context') wrote = (await intakeContext(input)).commands.length > 0;
      else {
        const out = await intakeEvent(input);
        wrote = out.commands.length > 0;
        if (out.notify !== null) await ringInline(runner, target, env, { pane, agent, settings: notify });
      }
    } finally {
      runner.close();
    }
    // A running collector publishes the stamp at once instead of on its next poll.
    if (wrote) {
      const wake = await import('../../collector/fleet/wake.js');
      await wake.pokeWake(wake.wakeSocketPath(wake.canonicalSocketPath(wake.socketPathOfTarget(target, env)), wake.wakeDir(env)));
    }
  } catch {
    // Silent by contract.
  }
  return 0;
}
