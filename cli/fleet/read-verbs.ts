// `ls`, `status`, `wait` and `subscribe` against a hub: the same verbs, the same documents, over
// every host. Rows are the protocol form (no titles ever leave their host); text forms add host
// and server columns.

import type { FleetDocument, FleetRow } from '../../shared/fleet.js';
import { fleetAsks, fleetLsTextLine } from '../../shared/ls-text.js';
import { rowsDocument, singleRowDocument, toJsonLine } from '../../shared/row.js';
import { countRows, statusJson, statusPlain, statusProm, statusTmux } from '../../shared/status-format.js';
import { Waiter } from '../../shared/wait.js';
import { waitLoop, waitRequestOf } from '../wait-loop.js';
import { UsageError, type Parsed } from '../args.js';
import type { LS, STATUS, SUBSCRIBE, WAIT } from '../verb-flags.js';
import { guard, loadLocalConfig } from '../local.js';
import { selectorFrom } from '../selector-opts.js';
import { humanLs } from '../ls-form.js';
import type { Edge } from '../../shared/edges.js';
import { edgeLine, lsTable, nowLine } from '../../shared/ls-table.js';
import { getJson, hubTarget, selectorQuery, streamSse, type HubTarget } from './hub-client.js';

const FORMATS = ['tmux', 'plain', 'json', 'prom'] as const;

function target(p: Parsed): HubTarget {
  // Validates the selector flags the same way the local verbs do (exit 2 on a bad token).
  selectorFrom(p, { fleet: true });
  return hubTarget(p, process.env);
}

const agents = (t: HubTarget, q: URLSearchParams) => getJson<FleetDocument>(t, '/v1/agents', q);

export async function ls(p: Parsed<typeof LS>): Promise<number> {
  const t = target(p);
  const human = humanLs(p);
  return guard(async () => {
    const doc = await agents(t, selectorQuery(p));
    const pane = p.opts.pane;
    const rows = pane ? doc.agents.filter((r) => r.pane === pane) : doc.agents;
    if (human) {
      const hosts = new Map(doc.hosts.map((h) => [h.host, h]));
      const table = rows.map((r) => ({ ...r, asks: fleetAsks(r, hosts.get(r.host)) }));
      const servers = new Set(rows.map((r) => `${r.host}\u0000${r.server}`)).size > new Set(rows.map((r) => r.host)).size;
      process.stdout.write(rows.length ? lsTable(table, Date.now(), { host: true, server: servers }) : 'tma: no agent panes in the fleet\n');
    } else if (p.opts.json === true)
      process.stdout.write(`${toJsonLine({ ...doc, agents: rows })}
`);
    else {
      // The fleet form ends with what a blocked row asks, so a person sees what they would approve.
      const hosts = new Map(doc.hosts.map((h) => [h.host, h]));
      for (const r of rows)
        process.stdout.write(`${fleetLsTextLine(r)}	${fleetAsks(r, hosts.get(r.host))}${r.stale ? '	stale' : ''}
`);
    }
    return 0;
  });
}

export async function status(p: Parsed<typeof STATUS>): Promise<number> {
  const format = p.opts.format ?? 'tmux';
  if (!(FORMATS as readonly string[]).includes(format)) throw new UsageError(`unknown --format "${format}" (tmux, plain, json, prom)`);
  const t = target(p);
  return guard(async () => {
    // The bar is this machine's, so its [status] styles apply to the fleet counts too.
    const styles = format === 'tmux' || format === 'plain' ? (await loadLocalConfig(p)).status : {};
    const doc = await agents(t, selectorQuery(p));
    const c = countRows(doc.agents);
    const out =
      format === 'tmux'
        ? statusTmux(c, styles)
        : format === 'plain'
          ? statusPlain(c, styles)
          : format === 'json'
            ? statusJson(c, doc.agents)
            : statusProm(doc.agents, Date.now(), true);
    process.stdout.write(out);
    return 0;
  });
}

export async function subscribe(p: Parsed<typeof SUBSCRIBE>): Promise<number> {
  const text = p.opts.json !== true;
  if (text && p.opts.events === true) throw new UsageError('--events is a JSON stream: add --json (without it, subscribe prints readable state changes)');
  const t = target(p);
  const q = selectorQuery(p);
  // Readable lines are the edge stream, worded; the document it opens with says how things stand.
  if (p.opts.events === true || text) q.set('events', '1');
  let first = true;
  const readable = (data: string): string => {
    const o = JSON.parse(data) as { agents?: FleetRow[] } & Partial<Edge>;
    if (first && Array.isArray(o.agents)) {
      first = false;
      const now = Date.now();
      return o.agents.length
        ? o.agents.map((r) => nowLine({ ...r, stale: r.stale }, now, true) + (r.stale ? ' (stale)' : '')).join('\n')
        : 'no agent panes in the fleet yet; waiting for changes';
    }
    return o.at_ms !== undefined ? edgeLine(o as Edge, true) : '';
  };
  return guard(async () => {
    let open = true;
    process.stdout.on('error', () => (open = false));
    await streamSse(t, '/v1/subscribe', q, (data) => {
      if (!open) return false;
      // The hub's JSON is written again as ours: DEL, C1 and bidi controls escaped, the same document.
      const line = text ? readable(data) : toJsonLine(JSON.parse(data));
      if (line) process.stdout.write(`${line}\n`);
      return open;
    });
    if (!open) return 0;
    process.stderr.write('tma: the hub closed the stream\n');
    return 1;
  });
}

export async function wait(p: Parsed<typeof WAIT>): Promise<number> {
  const sel = selectorFrom(p, { fleet: true });
  const req = waitRequestOf(p, sel);
  const t = hubTarget(p, process.env);
  const json = p.opts.json === true;
  return guard(async () => {
    // Selection happens in the waiter, so that members leaving the selection are seen as such.
    const observe = async () => {
      const doc = await agents(t, new URLSearchParams());
      const staleHosts = new Set(doc.hosts.filter((h) => h.stale).map((h) => h.host));
      // A hub cannot tell a closed pane from an agent gone under a live one: liveness is unknown.
      return { rows: doc.agents, paneAlive: () => null, staleHosts };
    };
    return waitLoop(req, new Waiter<FleetRow>(req.spec, { qualify: true }), observe, async (step) => {
      if (!json) for (const r of step.rows) process.stdout.write(`${fleetLsTextLine(r)}\n`);
      else process.stdout.write(`${toJsonLine(step.form === 'row' ? singleRowDocument(step.rows[0]!) : rowsDocument(step.rows))}\n`);
    });
  });
}
