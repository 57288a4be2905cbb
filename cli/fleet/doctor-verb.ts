// `tma --hub URL doctor`: what looks wrong across the fleet, from the hub's records of each host:
// its link, the last refusal of its link, its clock offset, its collector's version, and the
// fleet notifications from it that a sink failed to deliver.

import type { FleetDocument, HostStatus } from '../../shared/fleet.js';
import { toJsonLine } from '../../shared/row.js';
import { safeText } from '../../shared/terminal-text.js';
import { type Parsed } from '../args.js';
import type { DOCTOR } from '../verb-flags.js';
import { guard } from '../local.js';
import { getJson, hubTarget } from './hub-client.js';

interface Notification {
  host?: string;
  delivery?: Record<string, { state?: string; last_error?: string | null; at_ms?: number | null }>;
}

export interface NotifyHealth {
  total: number;
  failed: number;
  last_failure: { sink: string; error: string | null; at_ms: number | null } | null;
}

/** A clock this far off makes ages on other hosts misleading. */
export const CLOCK_WARN_MS = 2000;

export function notifyHealth(list: readonly Notification[], host: string): NotifyHealth {
  const mine = list.filter((n) => n.host === host);
  let failed = 0;
  let last: NotifyHealth['last_failure'] = null;
  for (const n of mine)
    for (const [sink, d] of Object.entries(n.delivery ?? {})) {
      if (d.state !== 'failed') continue;
      failed++;
      if (last === null || (d.at_ms ?? 0) > (last.at_ms ?? 0)) last = { sink, error: d.last_error ?? null, at_ms: d.at_ms ?? null };
    }
  return { total: mine.length, failed, last_failure: last };
}

const ago = (now: number, ms: number | null) => (ms === null ? 'never' : `${Math.max(0, Math.round((now - ms) / 1000))}s ago`);

/** The problems a person should act on, one phrase each; [] for a healthy host. */
export function hostProblems(h: HostStatus, n: NotifyHealth | null): string[] {
  const out: string[] = [];
  if (!h.reachable) out.push(`link down${h.reason ? ` (${h.reason})` : ''}`);
  else if (h.stale) out.push('link up but not yet in sync');
  if (h.last_refusal) out.push(`link refused: ${h.last_refusal.reason}`);
  if (h.clock_offset_ms !== null && Math.abs(h.clock_offset_ms) > CLOCK_WARN_MS) out.push(`clock off by ${h.clock_offset_ms} ms`);
  if (n && n.failed > 0) out.push(`${n.failed} notification deliver${n.failed === 1 ? 'y' : 'ies'} failed`);
  return out;
}

export function doctorText(doc: FleetDocument, notes: readonly Notification[] | null, now: number): string {
  const lines: string[] = [];
  for (const h of doc.hosts) {
    const n = notes === null ? null : notifyHealth(notes, h.host);
    const agents = doc.agents.filter((r) => r.host === h.host).length;
    const problems = hostProblems(h, n);
    lines.push(`${h.host}: ${problems.length ? problems.join('; ') : 'ok'}`);
    lines.push(`  link: ${h.reachable ? 'up' : 'down'} over ${h.transport}, last heard ${ago(now, h.last_seen_ms)}${h.reason ? ` (${h.reason})` : ''}`);
    lines.push(`  last refusal: ${h.last_refusal ? `${h.last_refusal.reason}, ${ago(now, h.last_refusal.at_ms)}` : 'none'}`);
    lines.push(`  clock offset: ${h.clock_offset_ms === null ? 'unknown' : `${h.clock_offset_ms} ms`}`);
    lines.push(`  collector: ${h.collector_version ?? 'never said hello'}`);
    lines.push(`  servers: ${h.servers.length}, agents: ${agents}`);
    if (n === null) lines.push('  notifications: unknown (the hub did not list them)');
    else {
      const last = n.last_failure ? `; last: ${n.last_failure.sink}: ${n.last_failure.error ?? 'failed'}` : '';
      lines.push(`  notifications: ${n.total} recent, ${n.failed} failed deliver${n.failed === 1 ? 'y' : 'ies'}${last}`);
    }
  }
  if (doc.hosts.length === 0) lines.push('the hub knows no host yet');
  // Host names, reasons, versions and sink errors all come from hosts or the hub.
  return `${lines.map((l) => safeText(l, 4096)).join('\n')}\n`;
}

export function doctorDocument(doc: FleetDocument, notes: readonly Notification[] | null): Record<string, unknown> {
  return {
    schema: 1,
    hosts: doc.hosts.map((h) => {
      const n = notes === null ? null : notifyHealth(notes, h.host);
      return {
        host: h.host,
        transport: h.transport,
        reachable: h.reachable,
        stale: h.stale,
        reason: h.reason,
        last_seen_ms: h.last_seen_ms,
        last_refusal: h.last_refusal,
        clock_offset_ms: h.clock_offset_ms,
        collector_version: h.collector_version,
        servers: h.servers.length,
        agents: doc.agents.filter((r) => r.host === h.host).length,
        notifications: n,
        problems: hostProblems(h, n),
      };
    }),
  };
}

export async function main(p: Parsed<typeof DOCTOR>): Promise<number> {
  const t = hubTarget(p, process.env);
  return guard(async () => {
    const doc = await getJson<FleetDocument>(t, '/v1/agents');
    let notes: Notification[] | null = null;
    try {
      notes = (await getJson<{ notifications: Notification[] }>(t, '/v1/notifications', new URLSearchParams({ limit: '1000' }))).notifications;
    } catch {
      // An older hub, or none kept: the rest of the report still stands.
    }
    const report = doctorDocument(doc, notes);
    process.stdout.write(p.opts.json === true ? `${toJsonLine(report)}\n` : doctorText(doc, notes, Date.now()));
    const bad = (report.hosts as { problems: string[] }[]).some((h) => h.problems.length > 0);
    return p.opts['exit-code'] === true && bad ? 1 : 0;
  });
}
