// `tma --hub URL act NAME --dry-run` and `act --list` over a hub: what an action would do on a pane
// of another host, judged on that host (its stamp, its gate, its policy, the binders of the row the
// person sees) and never sent. The hub only routes the question (POST /v1/preview).

import type { FleetDocument, FleetRow, HostStatus } from '../../shared/fleet.js';
import { fleetAsks } from '../../shared/ls-text.js';
import { previewResultSchema, type PreviewResult } from '../../shared/protocol.js';
import { safeLines } from '../../shared/terminal-text.js';
import { toJsonLine } from '../../shared/row.js';
import { ExitError } from '../local.js';
import { postJson, type HubTarget } from './hub-client.js';

type Verdict = PreviewResult['actions'][number];

/** Ask the row's host what these actions (all it allows, when null) would do there now. */
export async function preview(t: HubTarget, row: FleetRow, actions: string[] | null): Promise<PreviewResult> {
  const body = {
    host: row.host,
    server: row.server,
    pane: row.pane,
    ...(actions ? { actions } : {}),
    expect_episode_ms: row.episode_ms,
    expect_permission_request: row.permission_request ?? null,
    expect_prompt: row.prompt_id ?? null,
  };
  const res = await postJson<unknown>(t, '/v1/preview', body, 30_000);
  const err = (res.body as { error?: unknown } | null)?.error;
  if (res.status !== 200) throw new ExitError(typeof err === 'string' ? err : `the hub answered ${res.status}`, res.status === 404 ? 3 : 1);
  const r = previewResultSchema.safeParse(res.body);
  if (!r.success) throw new ExitError('the hub answered something that is not a preview', 1);
  return r.data;
}

/** What a fire would send, in words: the keys, the agent's API, or a command; never an address. */
export function effectWords(v: Pick<Verdict, 'lane' | 'keys'>): string {
  if (v.lane === 'keys') return `keys: ${(v.keys ?? []).join(' ')}`;
  if (v.lane === 'api') return "api: the agent's reply API";
  if (v.lane === 'exec') return 'command (exec action)';
  return 'none';
}

/** What the prompt asks as its host shares it; NOT_SHARED when the host keeps it. */
function asksOf(r: PreviewResult, row: FleetRow, host: HostStatus | undefined): string {
  return fleetAsks({ state: (r.state as FleetRow['state'] | null) ?? row.state, pending_summary: r.pending_summary ?? row.pending_summary }, host);
}

/** One target of a fleet dry run as JSON: the local dry-run keys, then where, then what is new. */
export function dryRunObject(action: string, r: PreviewResult, row: FleetRow, host: HostStatus | undefined): Record<string, unknown> {
  const v = r.actions.find((a) => a.name === action) ?? { name: action, fireable: false, reason: 'not-allowed', lane: null, keys: null };
  return {
    pane: r.pane,
    agent: r.agent,
    fireable: v.fireable,
    reason: v.reason,
    effect: v.fireable || v.lane !== null ? effectWords(v) : null,
    prompt_id: r.prompt_id,
    pending_summary: r.pending_summary,
    host: r.host,
    server: r.server,
    locator: row.locator,
    lane: v.lane,
    keys: v.keys,
    asks: asksOf(r, row, host) || null,
    shares_prompt: host?.shares_prompt ?? null,
  };
}

export function dryRunText(action: string, r: PreviewResult, row: FleetRow, host: HostStatus | undefined): string {
  const o = dryRunObject(action, r, row, host);
  const asks = (o.asks as string | null) ?? '';
  return [
    `action: ${action}`,
    `host: ${r.host}`,
    `server: ${r.server}`,
    `pane: ${r.pane} (${row.locator})`,
    `agent: ${r.agent ?? ''}`,
    `asks: ${asks}`,
    `effect: ${(o.effect as string | null) ?? 'none'}`,
    `gate: ${!r.found ? 'vanished (pane gone)' : o.fireable ? 'fireable' : `refused: ${String(o.reason)}`}`,
    `checked on ${r.host} just now; nothing was sent`,
  ]
    .map((l) => `${l}\n`)
    .join('');
}

export async function fleetDryRun(t: HubTarget, doc: FleetDocument, action: string, rows: FleetRow[], all: boolean, json: boolean): Promise<number> {
  const hostOf = (r: FleetRow) => doc.hosts.find((h) => h.host === r.host);
  const results: { row: FleetRow; r: PreviewResult }[] = [];
  for (const row of rows) results.push({ row, r: await preview(t, row, [action]) });
  if (json) {
    const objs = results.map(({ row, r }) => dryRunObject(action, r, row, hostOf(row)));
    process.stdout.write(`${toJsonLine(all ? { schema: 1, action, targets: objs } : { schema: 1, action, ...objs[0]! })}\n`);
    return 0;
  }
  if (!all) {
    process.stdout.write(safeLines(dryRunText(action, results[0]!.r, results[0]!.row, hostOf(results[0]!.row))));
    return 0;
  }
  const lines = [`targets: ${results.length}`];
  for (const { row, r } of results) {
    const o = dryRunObject(action, r, row, hostOf(row));
    lines.push(
      `${r.host} ${r.pane} ${o.fireable ? `would fire (${String(o.effect)})` : `refused: ${String(o.reason)}`}${o.asks ? ` — asks: ${String(o.asks)}` : ''}`,
    );
  }
  process.stdout.write(`${safeLines(lines.join('\n'))}\n`);
  return 0;
}

/** `act --list` with a pane: each action its host allows, and whether it would fire there now. */
export async function fleetListPane(t: HubTarget, row: FleetRow, json: boolean): Promise<number> {
  const r = await preview(t, row, null);
  if (json) {
    process.stdout.write(`${toJsonLine({ schema: 1, host: r.host, server: r.server, pane: r.pane, agent: r.agent, actions: r.actions })}\n`);
    return 0;
  }
  const lines = r.actions.map((v) => `${v.name} ${v.fireable ? 'fireable' : `refused: ${v.reason ?? 'unknown'}`} (${effectWords(v)})`);
  process.stdout.write(`${safeLines([`${r.host} ${r.pane} (${row.locator}) ${r.agent ?? ''}`.trimEnd(), ...lines.map((l) => `  ${l}`)].join('\n'))}\n`);
  return 0;
}

/** `act --list` without a pane: what each host lets a hub fire, and by which lane per agent. */
export function fleetListHosts(doc: FleetDocument, host: string | null, json: boolean): number {
  const hosts = doc.hosts.filter((h) => host === null || h.host === host);
  if (host !== null && hosts.length === 0) throw new ExitError(`no host ${host} in the fleet`, 3);
  if (json) {
    const out = hosts.map((h) => ({ host: h.host, actions_allowed: h.actions_allowed, actions_by_agent: h.actions_by_agent }));
    process.stdout.write(`${toJsonLine({ schema: 1, hosts: out })}\n`);
    return 0;
  }
  const lines: string[] = [];
  for (const h of hosts) {
    lines.push(`${h.host}: ${h.actions_allowed.length ? h.actions_allowed.join(' ') : '(no action may be fired from a hub)'}`);
    for (const [agent, lanes] of Object.entries(h.actions_by_agent ?? {}))
      lines.push(
        `  ${agent === '*' ? 'any agent' : agent}: ${Object.entries(lanes)
          .map(([a, lane]) => `${a}=${lane}`)
          .join(' ')}`,
      );
  }
  process.stdout.write(`${safeLines(lines.join('\n'))}\n`);
  return 0;
}
