// `tma --hub URL act NAME …`: fire an action on a pane of any host through the hub. The CLI finds
// the row the person means in the fleet document and sends what that row showed (its episode, its
// permission request) as binders, so a prompt that changed in the meantime is refused by the host
// rather than answered. Every request carries a slot: asking again with it never fires twice.

import { randomBytes } from 'node:crypto';
import { severity } from '../../collector/act/outcome.js';
import type { FleetDocument, FleetRow } from '../../shared/fleet.js';
import { actResultSchema, type ActResult } from '../../shared/protocol.js';
import { fleetAsks } from '../../shared/ls-text.js';
import { safeLines } from '../../shared/terminal-text.js';
import { toJsonLine } from '../../shared/row.js';
import { isEmptySelector } from '../../shared/selectors.js';
import { UsageError, type Parsed } from '../args.js';
import type { ACT } from '../verb-flags.js';
import { ExitError, guard } from '../local.js';
import { selectorFrom } from '../selector-opts.js';
import { fleetDryRun, fleetListHosts, fleetListPane } from './act-preview.js';
import { getJson, hubTarget, postJson, selectorQuery, type HubTarget } from './hub-client.js';

/** Longer than the hub's own deadline for the host's answer, so the hub speaks first. */
export const CLIENT_TIMEOUT_MS = 30_000;

const SLOT = /^[A-Za-z0-9._:-]{1,200}$/;
/** Local-only flags: a hub never forces, never assumes a yes, and passes no exec arguments. */
const LOCAL_ONLY = ['force', 'yes', 'arg', 'again'] as const;
/** Flags that only mean something to a fire; `--list` refuses them. */
const FIRE_ONLY = ['all', 'dry-run', 'slot', 'expect-episode-ms', 'expect-permission-request', 'expect-prompt'] as const;

export interface ActBody {
  host: string;
  server: string;
  pane: string;
  action: string;
  expect_episode_ms: number | null;
  expect_permission_request: string | null;
  slot: string;
  expect_prompt: string | null;
}

export const newSlot = () => `cli-${randomBytes(12).toString('hex')}`;

type Pick1 = { kind: 'ok'; row: FleetRow } | { kind: 'fail'; code: number; message: string };

/** The one row a single fire means: by pane (and host/server when given), or by selector. */
export function pickRow(rows: readonly FleetRow[], want: { pane: string | null; host: string | null; server: string | null }): Pick1 {
  const hits = rows.filter(
    (r) => (want.pane === null || r.pane === want.pane) && (want.host === null || r.host === want.host) && (want.server === null || r.server === want.server),
  );
  const where = [want.pane ?? 'agent pane', want.host ? `on host ${want.host}` : '', want.server ? `server ${want.server}` : ''].filter(Boolean).join(' ');
  if (hits.length === 0) return { kind: 'fail', code: 3, message: `no ${where} in the fleet` };
  if (hits.length > 1) {
    const names = hits.map((r) => `${r.host} ${r.server} ${r.pane} (${r.locator})`).join(', ');
    const hint = want.pane !== null ? 'pass --host and --server' : 'narrow the selector or pass --all';
    return { kind: 'fail', code: 1, message: `more than one agent pane matches: ${names}; ${hint}` };
  }
  return { kind: 'ok', row: hits[0]! };
}

/** The request for one row; the caller's binders win over what the row showed. */
export function bodyFor(
  action: string,
  row: Pick<FleetRow, 'host' | 'server' | 'pane' | 'episode_ms' | 'permission_request' | 'prompt_id'>,
  given: { expectEpisodeMs: number | null; expectPermissionRequest: string | null; slot: string | null; expectPrompt?: string | null },
): ActBody {
  return {
    host: row.host,
    server: row.server,
    pane: row.pane,
    action,
    expect_episode_ms: given.expectEpisodeMs ?? row.episode_ms,
    expect_permission_request: given.expectPermissionRequest ?? row.permission_request ?? null,
    slot: given.slot ?? newSlot(),
    // The prompt the row showed: a different one on the host is refused, never answered.
    expect_prompt: given.expectPrompt ?? row.prompt_id ?? null,
  };
}

/** The result object in the wire key order: the local §2.7 keys, `cached` if given, host, server. */
export function remoteResultObject(r: ActResult): Record<string, unknown> {
  const o: Record<string, unknown> = { schema: 1, action: r.action, pane: r.pane, outcome: r.outcome, exit_code: r.exit_code, reason: r.reason };
  if (r.cached !== undefined) o.cached = r.cached;
  o.host = r.host;
  o.server = r.server;
  return o;
}

export function remoteEnvelope(results: readonly ActResult[]): { schema: 1; results: Record<string, unknown>[] } {
  return {
    schema: 1,
    results: results.map((r) => {
      const { schema: _schema, ...rest } = remoteResultObject(r);
      return rest;
    }),
  };
}

const KNOWN = new Set(['sent', 'replied', 'spawned', 'exited', 'timeout', 'refused', 'vanished', 'error']);

/** The fan-out exit: the worst result's own code, by the local severity order. */
export function worstRemoteExit(results: readonly ActResult[]): number {
  let worst: ActResult | null = null;
  // An outcome this CLI does not know yet is ranked with `error`: never mistaken for success.
  const rank = (r: ActResult) => (KNOWN.has(r.outcome) ? severity(r as Parameters<typeof severity>[0]) : 6);
  for (const r of results) if (worst === null || rank(r) > rank(worst)) worst = r;
  return worst === null ? 0 : worst.exit_code;
}

/** One stderr line per result, like the local verb, naming the host; null where local says nothing. */
export function remoteNote(r: ActResult, slot: string): string | null {
  const head = `${r.action} ${r.pane} on ${r.host}`;
  switch (r.outcome) {
    case 'sent':
      return `${head}: keys sent${r.cached ? ' (replayed)' : ''}`;
    case 'replied':
      return `${head}: replied${r.cached ? ' (replayed)' : ''}`;
    case 'refused':
      return `${head}: refused (${r.reason ?? 'unknown'})`;
    case 'vanished':
      return `${head}: vanished${r.reason ? ` (${r.reason})` : ''}`;
    case 'timeout':
      if (r.reason === 'undelivered') return `${head}: not delivered, the host is not connected; nothing was sent`;
      if (r.reason === 'fired-unknown') return `${head}: no answer in time; it may have fired — ask again with --slot ${slot} to learn what happened`;
      return `${head}: timed out`;
    case 'error':
      if (r.reason === 'fired-unknown') return `${head}: failed and may have fired; --slot ${slot} replays what the host recorded`;
      return `${head}: failed${r.reason ? ` (${r.reason})` : ''}`;
    default:
      return null;
  }
}

function binders(p: Parsed<typeof ACT>): { expectEpisodeMs: number | null; expectPermissionRequest: string | null; expectPrompt: string | null } {
  const prompt = p.opts['expect-prompt'];
  if (prompt !== undefined && !/^[A-Za-z0-9._:-]{1,64}$/.test(prompt)) throw new UsageError(`--expect-prompt needs a prompt id, got "${prompt}"`);
  const ep = p.opts['expect-episode-ms'];
  const req = p.opts['expect-permission-request'];
  if (req === '') throw new UsageError('--expect-permission-request needs a request id');
  return { expectEpisodeMs: ep ?? null, expectPermissionRequest: req ?? null, expectPrompt: prompt ?? null };
}

interface Plan {
  /** `--list`: what each host allows (or, with --pane, what would fire there). */
  list: boolean;
  dryRun: boolean;
  action: string;
  all: boolean;
  pane: string | null;
  server: string | null;
  given: { expectEpisodeMs: number | null; expectPermissionRequest: string | null; slot: string | null; expectPrompt: string | null };
}

/** Every usage rule, checked before the hub is asked anything. */
export function planFleetAct(p: Parsed<typeof ACT>): Plan {
  const o = p.opts;
  for (const f of LOCAL_ONLY)
    if (o[f] !== undefined) throw new UsageError(`--${f} is not available with --hub (the host never forces, assumes a yes, or takes --arg)`);
  const list = o.list === true;
  const action = p.positionals[0];
  if (p.positionals.length > 1) throw new UsageError(`unexpected argument "${p.positionals[1]}"`);
  const sel = selectorFrom(p, { fleet: true });
  if (list) {
    if (action !== undefined) throw new UsageError('--list takes no action name');
    const used = FIRE_ONLY.find((f) => o[f] !== undefined);
    if (used) throw new UsageError(`--list cannot be combined with --${used}`);
    if (o.pane !== undefined && !/^%\d+$/.test(o.pane)) throw new UsageError(`--pane takes a pane id like %3, got "${o.pane}"`);
    const none = { expectEpisodeMs: null, expectPermissionRequest: null, slot: null, expectPrompt: null };
    return { list, dryRun: false, action: '', all: false, pane: o.pane ?? null, server: o.server ?? null, given: none };
  }
  if (action === undefined) throw new UsageError('act needs an action name (or --list)');
  const pane = o.pane ?? null;
  const server = o.server ?? null;
  const all = o.all === true;
  if (pane !== null && !/^%\d+$/.test(pane)) throw new UsageError(`--pane takes a pane id like %3, got "${pane}"`);
  if (server === '') throw new UsageError('--server needs a socket path');
  if (pane !== null) {
    if (all) throw new UsageError('--pane cannot be combined with --all');
    // --host (and --server) place a pane id; the other selectors pick rows and would conflict.
    if (!isEmptySelector({ ...sel, host: null })) throw new UsageError('--pane cannot be combined with selector flags other than --host');
  } else if (!all && isEmptySelector(sel) && server === null) {
    throw new UsageError('no target: give --pane (with --host), a selector, or --all');
  }
  const b = binders(p);
  const slot = o.slot ?? null;
  if (slot !== null && !SLOT.test(slot)) throw new UsageError('--slot uses 1–200 letters, digits and . _ : -');
  if (all && (slot !== null || b.expectEpisodeMs !== null || b.expectPermissionRequest !== null || b.expectPrompt !== null)) {
    throw new UsageError('--slot and --expect-* name a single pane; they cannot be combined with --all');
  }
  const dryRun = o['dry-run'] === true;
  if (dryRun && slot !== null) throw new UsageError('--slot names a fire; a dry run sends nothing');
  return { list: false, dryRun, action, all, pane, server, given: { ...b, slot } };
}

/** What the answered row asked, as its host shared it (or that it did not), after the note. */
function askedNote(row: FleetRow, doc: FleetDocument): string {
  const asks = fleetAsks(
    row,
    doc.hosts.find((h) => h.host === row.host),
  );
  return asks === '' ? '' : ` (asked: ${asks})`;
}

type Sent = { kind: 'result'; result: ActResult } | { kind: 'fail'; code: number; message: string };

async function send(t: HubTarget, body: ActBody): Promise<Sent> {
  let res: { status: number; body: unknown };
  try {
    res = await postJson<unknown>(t, '/v1/act', body, CLIENT_TIMEOUT_MS);
  } catch (e) {
    // A refused token never reached a host; anything else (a broken connection, a garbled
    // answer) may have, and only the slot can tell.
    const message = (e as Error).message;
    const maybe =
      e instanceof ExitError && /^the hub refused/.test(message) ? '' : `; the request may have reached ${body.host}: ask again with --slot ${body.slot}`;
    return { kind: 'fail', code: e instanceof ExitError ? e.code : 1, message: `${message}${maybe}` };
  }
  const err = (res.body as { error?: unknown } | null)?.error;
  const said = typeof err === 'string' ? err : `HTTP ${res.status}`;
  if (res.status === 200) {
    const r = actResultSchema.safeParse(res.body);
    if (r.success) return { kind: 'result', result: r.data };
    return { kind: 'fail', code: 1, message: `the hub answered something that is not an act result; ask again with --slot ${body.slot}` };
  }
  if (res.status === 400) return { kind: 'fail', code: 2, message: `the hub refused the request: ${said}` };
  if (res.status === 404) return { kind: 'fail', code: 3, message: said };
  return { kind: 'fail', code: 1, message: said };
}

export async function main(p: Parsed<typeof ACT>): Promise<number> {
  const plan = planFleetAct(p);
  const t = hubTarget(p, process.env);
  const json = p.opts.json === true;
  return guard(async () => {
    const q = selectorQuery(p);
    const doc = await getJson<FleetDocument>(t, '/v1/agents', q);
    const rows = plan.server === null ? doc.agents : doc.agents.filter((r) => r.server === plan.server);

    if (plan.list) {
      if (plan.pane === null) return fleetListHosts(doc, p.opts.host ?? null, json);
      const picked = pickRow(rows, { pane: plan.pane, host: p.opts.host ?? null, server: plan.server });
      if (picked.kind === 'fail') throw new ExitError(picked.message, picked.code);
      return fleetListPane(t, picked.row, json);
    }
    if (plan.dryRun) {
      let targets = rows;
      if (!plan.all) {
        const picked = pickRow(rows, { pane: plan.pane, host: p.opts.host ?? null, server: plan.server });
        if (picked.kind === 'fail') throw new ExitError(picked.message, picked.code);
        // The binders a fire would carry: what the caller quoted, else what the row showed.
        const b = bodyFor(plan.action, picked.row, plan.given);
        targets = [
          {
            ...picked.row,
            episode_ms: b.expect_episode_ms ?? picked.row.episode_ms,
            permission_request: b.expect_permission_request,
            prompt_id: b.expect_prompt,
          },
        ];
      } else if (rows.length === 0) throw new UsageError('no agent pane matches');
      return fleetDryRun(t, doc, plan.action, targets, plan.all, json);
    }

    if (!plan.all) {
      const picked = pickRow(rows, { pane: plan.pane, host: p.opts.host ?? null, server: plan.server });
      if (picked.kind === 'fail') throw new ExitError(picked.message, picked.code);
      const body = bodyFor(plan.action, picked.row, plan.given);
      const sent = await send(t, body);
      if (sent.kind === 'fail') throw new ExitError(sent.message, sent.code);
      const r = sent.result;
      const n = remoteNote(r, body.slot);
      if (n !== null) process.stderr.write(`tma: ${safeLines(`${n}${askedNote(picked.row, doc)}`)}\n`);
      if (json) process.stdout.write(`${toJsonLine(remoteResultObject(r))}\n`);
      return r.exit_code;
    }

    if (rows.length === 0) throw new UsageError('no agent pane matches');
    const results: ActResult[] = [];
    // One at a time, each bound to the row it was chosen from; one failure never stops the rest.
    for (const row of rows) {
      const body = bodyFor(plan.action, row, { expectEpisodeMs: null, expectPermissionRequest: null, slot: null });
      const sent = await send(t, body);
      let r: ActResult;
      if (sent.kind === 'result') r = sent.result;
      else {
        process.stderr.write(`tma: ${safeLines(`${plan.action} ${row.pane} on ${row.host}: ${sent.message}`)}\n`);
        const vanished = sent.code === 3;
        r = {
          schema: 1,
          action: plan.action,
          pane: row.pane,
          outcome: vanished ? 'vanished' : 'error',
          exit_code: vanished ? 3 : 1,
          reason: vanished ? 'pane-gone' : null,
          host: row.host,
          server: row.server,
        };
      }
      const n = remoteNote(r, body.slot);
      if (n !== null) process.stderr.write(`tma: ${safeLines(`${n}${askedNote(row, doc)}`)}\n`);
      results.push(r);
    }
    if (json) process.stdout.write(`${toJsonLine(remoteEnvelope(results))}\n`);
    return worstRemoteExit(results);
  });
}
