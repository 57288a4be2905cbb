// `ls`, `status`, `wait` and `subscribe` against a hub: the same verbs, the same documents, over
// every host. Rows are the protocol form (no titles ever leave their host); text forms add host
// and server columns.

import type { FleetDocument, FleetRow } from '../../shared/fleet.js';
import { fleetLsTextLine } from '../../shared/ls-text.js';
import { rowsDocument, singleRowDocument, toJsonLine } from '../../shared/row.js';
import { countRows, statusJson, statusPlain, statusProm, statusTmux } from '../../shared/status-format.js';
import { parseWaitSpec, parseWaitTimeout, timeoutMessage, Waiter, WaitUsageError } from '../../shared/wait.js';
import { flag, str, UsageError, type Parsed } from '../args.js';
import { guard } from '../local.js';
import { selectorFrom } from '../selector-opts.js';
import { getJson, hubTarget, selectorQuery, streamSse, type HubTarget } from './hub-client.js';

const FORMATS = ['tmux', 'plain', 'json', 'prom'] as const;

function target(p: Parsed): HubTarget {
  // Validates the selector flags the same way the local verbs do (exit 2 on a bad token).
  selectorFrom(p, { fleet: true });
  return hubTarget(p, process.env);
}

const agents = (t: HubTarget, q: URLSearchParams) => getJson<FleetDocument>(t, '/v1/agents', q);

export async function ls(p: Parsed): Promise<number> {
  const t = target(p);
  return guard(async () => {
    const doc = await agents(t, selectorQuery(p));
    const pane = str(p.opts.pane);
    const rows = pane ? doc.agents.filter((r) => r.pane === pane) : doc.agents;
    if (flag(p.opts.json)) process.stdout.write(`${toJsonLine({ ...doc, agents: rows })}\n`);
    else for (const r of rows) process.stdout.write(`${fleetLsTextLine(r)}${r.stale ? '\tstale' : ''}\n`);
    return 0;
  });
}

export async function status(p: Parsed): Promise<number> {
  const format = str(p.opts.format) ?? 'tmux';
  if (!(FORMATS as readonly string[]).includes(format)) throw new UsageError(`unknown --format "${format}" (tmux, plain, json, prom)`);
  const t = target(p);
  return guard(async () => {
    const doc = await agents(t, selectorQuery(p));
    const c = countRows(doc.agents);
    const out =
      format === 'tmux' ? statusTmux(c) : format === 'plain' ? statusPlain(c) : format === 'json' ? statusJson(c) : statusProm(doc.agents, Date.now(), true);
    process.stdout.write(out);
    return 0;
  });
}

export async function subscribe(p: Parsed): Promise<number> {
  if (!flag(p.opts.json)) throw new UsageError('subscribe needs --json');
  const t = target(p);
  const q = selectorQuery(p);
  if (flag(p.opts.events)) q.set('events', '1');
  return guard(async () => {
    let open = true;
    process.stdout.on('error', () => (open = false));
    await streamSse(t, '/v1/subscribe', q, (data) => {
      if (!open) return false;
      process.stdout.write(`${data}\n`);
      return open;
    });
    if (!open) return 0;
    process.stderr.write('tma: the hub closed the stream\n');
    return 1;
  });
}

const TICK_MS = 1000;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export async function wait(p: Parsed): Promise<number> {
  const sel = selectorFrom(p, { fleet: true });
  let spec;
  let timeoutMs: number | null = null;
  const timeoutRaw = str(p.opts.timeout);
  try {
    spec = parseWaitSpec(
      { until: str(p.opts.until), pane: str(p.opts.pane), any: flag(p.opts.any), all: flag(p.opts.all), count: str(p.opts.count), since: str(p.opts.since) },
      sel,
    );
    if (timeoutRaw !== undefined) timeoutMs = parseWaitTimeout(timeoutRaw);
  } catch (e) {
    if (e instanceof WaitUsageError) throw new UsageError(e.message);
    throw e;
  }
  const t = hubTarget(p, process.env);
  const json = flag(p.opts.json);
  // Selection happens in the waiter, so that members leaving the selection are seen as such.
  const q = new URLSearchParams();
  return guard(async () => {
    const waiter = new Waiter<FleetRow>(spec, { qualify: true });
    const deadline = timeoutMs === null ? Number.POSITIVE_INFINITY : Date.now() + timeoutMs;
    for (;;) {
      const doc = await agents(t, q);
      const staleHosts = new Set(doc.hosts.filter((h) => h.stale).map((h) => h.host));
      const step = waiter.step({ rows: doc.agents, paneAlive: () => null, staleHosts });
      for (const n of step.notes) process.stderr.write(`tma: ${n}\n`);
      if (step.kind === 'exit') {
        process.stderr.write(`tma: ${step.message}\n`);
        return step.code;
      }
      if (step.kind === 'done') {
        if (!json) for (const r of step.rows) process.stdout.write(`${fleetLsTextLine(r)}\n`);
        else process.stdout.write(`${toJsonLine(step.form === 'row' ? singleRowDocument(step.rows[0]!) : rowsDocument(step.rows))}\n`);
        return 0;
      }
      const left = deadline - Date.now();
      if (left <= 0) {
        process.stderr.write(`tma: ${timeoutMessage(spec, timeoutRaw ?? '0')}\n`);
        return 124;
      }
      await sleep(Math.min(TICK_MS, left));
    }
  });
}
