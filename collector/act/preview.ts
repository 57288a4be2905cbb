// The read-only views of the broker: `act --list` (what exists, and with a pane, what would fire)
// and `act --dry-run` (what a fire would do). Neither takes the lock nor re-detects: both judge
// the stamp as stored, and peek at the lock last.

import { actionAgents, type ActionManifest } from '../core/action-manifest.js';
import type { Engine } from '../engine/cycle.js';
import { replyUrl } from './api-lane.js';
import { readPaneFacts, type PaneFacts } from './facts.js';
import { apiPrecondition, apiTransportFor, endpointFor, gate, keysFor, laneFor } from './gate.js';
import { lockHeld } from './lock-value.js';
import { hookBehaviorOf } from './hook-requests.js';
import type { GateReason, RefusalReason } from './outcome.js';
import { parseAnswered } from '../core/prompt-id.js';
import type { TmuxRunner } from '../tmux/runner.js';

export interface PreviewContext {
  engine: Engine;
  apiBase: Readonly<Record<string, string>>;
  now: number;
  pidAlive: (pid: number) => boolean;
}

/** Whether the action would fire on these facts, and if not why (gate > API > lock). */
export function fireability(action: ActionManifest, f: PaneFacts, ctx: PreviewContext): RefusalReason | GateReason | null {
  const hasContextTelemetry = ctx.engine.manifests.some((m) => m.name === f.agent && m.telemetry.context !== null);
  const g = gate(action, f, { hasContextTelemetry, force: false });
  if (g !== null) return g;
  if (apiPrecondition(action, f.agent, f.permissionRequest, endpointFor(f.apiEndpoint, f.agent, ctx.apiBase)) !== null) return 'requires-unmet';
  if (lockHeld(f.lock, ctx.now, ctx.pidAlive)) return 'locked';
  if (action.kind === 'keys' && answeredShown(f)) return 'answered';
  return null;
}

/** The stamp shows the very prompt the pane last answered (a fire would re-check the screen). */
function answeredShown(f: PaneFacts): boolean {
  const a = parseAnswered(f.answered ?? undefined);
  return a !== null && f.state === 'blocked' && (f.promptId ?? null) === a.promptId;
}

export function whenObject(action: ActionManifest): Record<string, unknown> | null {
  const w = action.when;
  if (w === null) return null;
  return { state: w.state, detail: w.detail, context_pct_min: w.contextPctMin, context_pct_max: w.contextPctMax };
}

export interface ListEntry {
  action: ActionManifest;
  /** Only when listing against a pane; `lane` is how a keys action would answer it. */
  verdict?: { fireable: boolean; reason: RefusalReason | null; lane?: PaneLane | null };
}

export type PaneLane = 'hook' | 'api' | 'keys';

/**
 * How a keys action answers this pane: through the agent's waiting PermissionRequest hook while
 * one waits (approve and deny only), else over its API, else with keys; null for exec actions.
 */
export function paneLane(action: ActionManifest, f: PaneFacts, apiBase: Readonly<Record<string, string>>): PaneLane | null {
  if (action.kind !== 'keys') return null;
  if (hookBehaviorOf(action.name) !== null && (f.hookRequest ?? '') !== '') return 'hook';
  return laneFor(action, f.agent, endpointFor(f.apiEndpoint, f.agent, apiBase));
}

export function listObject(entries: readonly ListEntry[]): { schema: 1; actions: Record<string, unknown>[] } {
  return {
    schema: 1,
    actions: entries.map(({ action, verdict }) => {
      const o: Record<string, unknown> = { name: action.name, label: action.label, kind: action.kind, agents: actionAgents(action), when: whenObject(action) };
      if (verdict) {
        o.fireable = verdict.fireable;
        o.reason = verdict.reason;
        if (verdict.lane !== undefined) o.lane = verdict.lane;
      }
      return o;
    }),
  };
}

export function listText(entries: readonly ListEntry[]): string {
  return entries
    .map(({ action, verdict }) => {
      const agents = actionAgents(action);
      const lane = verdict?.lane ? ` lane: ${verdict.lane}` : '';
      const v = verdict ? (verdict.fireable ? ' fireable' : ` refused: ${verdict.reason}`) + lane : '';
      return `${action.name} ${action.kind} ${agents.length ? agents.join(',') : '(all)'}${v}\n`;
    })
    .join('');
}

/** What a fire would do, as one line. */
export function effectLine(action: ActionManifest, f: PaneFacts, apiBase: Readonly<Record<string, string>>): string {
  if (action.kind === 'exec') return `command: ${action.command}${action.detach ? ' (detached)' : ''}`;
  const api = apiTransportFor(action, f.agent);
  const ep = endpointFor(f.apiEndpoint, f.agent, apiBase);
  const lane = laneFor(action, f.agent, ep);
  if (paneLane(action, f, apiBase) === 'hook') return `hook: answer the waiting PermissionRequest hook (${hookBehaviorOf(action.name)})`;
  if (lane === 'keys') return `keys: ${(keysFor(action, f.agent, f.detail) ?? []).join(' ')}`;
  if (api !== null) return `api: POST ${replyUrl(ep ?? '<no endpoint>', f.permissionRequest ?? '<none>')} op=${api.op} reply=${api.reply}`;
  return 'none';
}

function contextLines(action: ActionManifest, f: PaneFacts, now: number, args: readonly string[]): string[] {
  const age = f.stampedAt > 0 ? `(${Math.max(0, now - f.stampedAt)} ms old)` : '(unstamped)';
  const stamped: [string, string][] = [
    ['TMA_AGENT', f.agent ?? ''],
    ['TMA_STATE', f.state ?? ''],
    ['TMA_DETAIL', f.detail ?? ''],
    ['TMA_SESSION_ID', f.session ?? ''],
    ['TMA_PID', f.pid === 0 ? '' : String(f.pid)],
  ];
  const live: [string, string][] = [
    ['TMA_PANE', f.pane],
    ['TMA_CWD', f.cwd],
    ['TMA_LOCATOR', f.locator],
    ['TMA_TITLE', f.title],
    ['TMA_ACTION', action.name],
  ];
  if (args.length) live.push(['TMA_ARG_COUNT', String(args.length)]);
  return ['context:', ...stamped.map(([k, v]) => `  ${k}=${v} ${age}`), ...live.map(([k, v]) => `  ${k}=${v} (live)`)];
}

/** The single-target dry run report. */
export async function dryRunOne(runner: TmuxRunner, action: ActionManifest, pane: string, ctx: PreviewContext, args: readonly string[]): Promise<string> {
  const f = await readPaneFacts(runner, pane);
  const lines = [`action: ${action.name}`, `pane: ${pane}`];
  if (f === null) return [...lines, 'agent: ', 'gate: vanished (pane gone)', 'effect: none'].join('\n') + '\n';
  const r = fireability(action, f, ctx);
  lines.push(`agent: ${f.agent ?? ''}`, `gate: ${r === null ? 'fireable' : `refused: ${r}`}`, `effect: ${effectLine(action, f, ctx.apiBase)}`);
  // What the prompt asks, so a person can tell what this would answer.
  lines.push(`prompt: ${f.promptId ?? ''}`, `asks: ${f.pendingSummary ?? ''}`);
  lines.push(...contextLines(action, f, ctx.now, args));
  return lines.join('\n') + '\n';
}

/** The fan-out dry run: one line per target. */
export async function dryRunMany(runner: TmuxRunner, action: ActionManifest, panes: readonly string[], ctx: PreviewContext): Promise<string> {
  const lines = [`targets: ${panes.length}`];
  for (const pane of panes) {
    const f = await readPaneFacts(runner, pane);
    const r = f === null ? 'vanished (pane gone)' : fireability(action, f, ctx);
    lines.push(`${pane} ${r === null ? 'would fire' : r.startsWith('vanished') ? r : `refused: ${r}`}`);
  }
  return lines.join('\n') + '\n';
}

/** `--dry-run --json`: the same verdicts as one document (one pane, or `targets` for --all). */
export async function dryRunDocument(
  runner: TmuxRunner,
  action: ActionManifest,
  panes: readonly string[],
  ctx: PreviewContext,
  args: readonly string[],
  all: boolean,
): Promise<Record<string, unknown>> {
  const one = async (pane: string): Promise<Record<string, unknown>> => {
    const f = await readPaneFacts(runner, pane);
    if (f === null) {
      return { pane, agent: null, fireable: false, reason: 'pane-gone', effect: null, prompt_id: null, pending_summary: null };
    }
    const r = fireability(action, f, ctx);
    return {
      pane,
      agent: f.agent,
      fireable: r === null,
      reason: r,
      effect: effectLine(action, f, ctx.apiBase),
      prompt_id: f.promptId ?? null,
      pending_summary: f.pendingSummary ?? null,
    };
  };
  if (all) {
    const targets: Record<string, unknown>[] = [];
    for (const pane of panes) targets.push(await one(pane));
    return { schema: 1, action: action.name, targets };
  }
  const { pane, ...rest } = await one(panes[0]!);
  return { schema: 1, action: action.name, pane, ...rest, ...(args.length ? { arg_count: args.length } : {}) };
}
