// Doctor's view of the long-lived collector on this server, read from tmux alone: its heartbeat
// (`@tma_collector_at`, renewed only while the collector watches output and vouches for the
// stamps) and its output watch (one control client per session that receives %output; the
// collector's command client attaches with `no-output` and is not counted).

import { KEY } from '../../collector/core/store-codec.js';

/** What doctor reads from tmux for this report, in one chain. */
export const WATCH_QUERIES: string[][] = [
  ['show-options', '-sqv', KEY.collectorAt],
  ['list-sessions', '-F', '#{session_id}\u001f#{session_name}'],
  ['list-clients', '-F', '#{session_id}\u001f#{client_control_mode}\u001f#{client_flags}'],
];

export interface WatchReport {
  heartbeat: { age_ms: number | null; fresh: boolean };
  output_watch: { live: boolean; sessions: { session: string; output_clients: number }[] };
}

/**
 * `fresh`: the heartbeat is younger than the freshness window, so one-shot readers take the stamps
 * as current. `live`: fresh, and every session has a control client receiving its output.
 */
export function watchReport(outs: readonly (string | undefined)[], now: number, freshnessMs: number): WatchReport {
  const at = Number((outs[0] ?? '').trim()) || 0;
  const age = at > 0 ? Math.max(0, now - at) : null;
  const fresh = age !== null && at <= now && age < freshnessMs;
  const clients = new Map<string, number>();
  for (const line of (outs[2] ?? '').split('\n')) {
    const [id, control, flags] = line.split('\u001f');
    if (!id || control !== '1') continue;
    if ((flags ?? '').split(',').includes('no-output')) continue;
    clients.set(id, (clients.get(id) ?? 0) + 1);
  }
  const sessions: WatchReport['output_watch']['sessions'] = [];
  for (const line of (outs[1] ?? '').split('\n')) {
    const sep = line.indexOf('\u001f');
    if (sep < 0) continue;
    sessions.push({ session: line.slice(sep + 1), output_clients: clients.get(line.slice(0, sep)) ?? 0 });
  }
  const live = fresh && sessions.length > 0 && sessions.every((s) => s.output_clients > 0);
  return { heartbeat: { age_ms: age, fresh }, output_watch: { live, sessions } };
}

export function renderWatch(r: WatchReport): string[] {
  const beat =
    r.heartbeat.age_ms === null
      ? "collector: no heartbeat (no collector watches this server's output)"
      : `collector: heartbeat ${r.heartbeat.age_ms} ms ago${r.heartbeat.fresh ? ' (stamps vouched for)' : ' (stale: no collector vouches for the stamps)'}`;
  const watched = r.output_watch.sessions.filter((s) => s.output_clients > 0).length;
  const per = r.output_watch.sessions.map((s) => `${s.session}: ${s.output_clients}`).join(', ');
  const watch = `output watch: ${r.output_watch.live ? 'live' : 'not live'}, ${watched} of ${r.output_watch.sessions.length} session(s) watched${per ? ` (${per})` : ''}`;
  return [beat, watch];
}
