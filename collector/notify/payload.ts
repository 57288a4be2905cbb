// The one payload builder every firing path uses (the collector's cycle, `tma event`, the
// notify-test): the schema 2 hook payload on a command's stdin, its environment mirror, the log
// line, the status-line message, and the title-free event that goes to a hub.

import type { FleetNotification, HostTrigger } from '../../shared/notify.js';
import type { AgentRow } from '../../shared/row.js';

export const PAYLOAD_SCHEMA = 2;

/** The facts of one fire. `row` is the pane's row as this host shows it (with its title). */
export interface Fire {
  trigger: HostTrigger;
  row: AgentRow;
  /** The episode instant (for context_high: the instant it fired). */
  episodeMs: number;
  /** When it fired. */
  at: number;
}

/** Key order of the schema 2 payload; `title` only with include_title. Pinned by a test. */
export const PAYLOAD_KEYS = [
  'schema',
  'agent',
  'pane',
  'state',
  'detail',
  'session',
  'locator',
  'title',
  'repo',
  'branch',
  'since_ms',
  'context_pct',
  'episode_ms',
] as const;

export function hookPayload(f: Fire, includeTitle: boolean): Record<string, unknown> {
  const r = f.row;
  const out: Record<string, unknown> = {
    schema: PAYLOAD_SCHEMA,
    agent: r.agent,
    pane: r.pane,
    state: f.trigger,
    detail: f.trigger === 'context_high' ? null : r.detail,
    session: r.session,
    locator: r.locator,
    title: r.title,
    repo: r.repo ?? '',
    branch: r.branch ?? '',
    // An age, not an instant: how long the person has been kept waiting when this went out.
    since_ms: Math.max(0, f.at - f.episodeMs),
    context_pct: r.context,
    episode_ms: f.episodeMs,
  };
  if (!includeTitle) delete out.title;
  return out;
}

/** The log line: the payload with the fire time right after `schema`. */
export function logLine(f: Fire, includeTitle: boolean): string {
  const { schema, ...rest } = hookPayload(f, includeTitle);
  return JSON.stringify({ schema, at: f.at, ...rest });
}

/** The environment a notify command sees; a key without a value is absent, never empty. */
export function payloadEnv(f: Fire, includeTitle: boolean): Record<string, string> {
  const p = hookPayload(f, includeTitle);
  const env: Record<string, string> = {
    TMA_AGENT: String(p.agent),
    TMA_PANE: String(p.pane),
    TMA_STATE: String(p.state),
    TMA_LOCATOR: String(p.locator),
    TMA_SINCE_MS: String(p.since_ms),
    TMA_EPISODE_MS: String(p.episode_ms),
  };
  if (includeTitle) env.TMA_TITLE = f.row.title;
  const optional: [string, unknown][] = [
    ['TMA_DETAIL', p.detail],
    ['TMA_SESSION', p.session],
    ['TMA_REPO', p.repo],
    ['TMA_BRANCH', p.branch],
    ['TMA_CONTEXT_PCT', p.context_pct],
  ];
  for (const [k, v] of optional) if (v !== null && v !== undefined && v !== '') env[k] = String(v);
  return env;
}

/** The status-line message: the title when there is one (it never leaves the host), else the pane. */
export function displayText(f: Fire): string {
  const head = `tma: ${f.row.agent} ${f.trigger}`;
  return f.row.title.trim() ? `${head} — ${f.row.title}` : `${head} in ${f.row.pane}`;
}

/** OSC 9 carries agent and trigger only: a terminal may show it anywhere, so never the title. */
export function oscText(f: Fire): string {
  return `${f.row.agent} ${f.trigger}`;
}

/**
 * What goes to a hub: title-free row facts. The agent's own prompt summary only where this host
 * shares prompts (`[remote] share_prompt`).
 */
export function fleetEvent(f: Fire, sharePrompt: boolean): FleetNotification {
  const r = f.row;
  return {
    trigger: f.trigger,
    server: r.server,
    pane: r.pane,
    agent: r.agent,
    episode_ms: f.episodeMs,
    at: f.at,
    state: r.state,
    detail: f.trigger === 'context_high' ? null : r.detail,
    locator: r.locator,
    repo: r.repo,
    branch: r.branch,
    context_pct: r.context,
    pending_tool: r.pending_tool,
    pending_summary: sharePrompt ? r.pending_summary : null,
    looking: null,
  };
}

/** The end of a notified blocked episode, for hub sinks that withdraw what they showed. */
export function resolvedEvent(blocked: FleetNotification, at: number, now: AgentRow | null): FleetNotification {
  return { ...blocked, trigger: 'resolved', at, state: now?.state ?? 'gone', detail: now?.detail ?? null, pending_summary: null };
}

/** The command a trigger runs: TMA_NOTIFY_CMD over everything, then per-trigger, then global. */
export function commandFor(
  trigger: HostTrigger,
  cfg: { command: string | null; triggerCommands: Record<HostTrigger, string | null> },
  env: NodeJS.ProcessEnv,
): string | null {
  const forced = env.TMA_NOTIFY_CMD;
  if (forced !== undefined && forced !== '') return forced;
  return cfg.triggerCommands[trigger] ?? cfg.command ?? null;
}
