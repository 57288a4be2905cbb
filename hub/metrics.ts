// Hub counters and their Prometheus text. Counters only grow for the life of the process; gauges
// are read from the store when scraped so they cannot drift from it.

import { ACT_OUTCOMES } from '../shared/protocol.js';
import { CLASSES, classOf } from '../shared/tokens.js';
import type { FleetReads } from './store/fleet-store.js';

/** What one use of a notification's action link came to: fired (forwarded), previewed (GET), or refused and why. */
export const LINK_USES = ['forwarded', 'previewed', 'altered', 'expired', 'used', 'changed', 'not-allowed', 'unreachable', 'unconfirmed'] as const;

export type SubscriberKind = 'ws' | 'sse';

/** A label value as the text format wants it: backslash, double quote and newline escaped. */
export function label(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

/** An act outcome from the wire outside the closed set is counted as `other`, so a collector cannot grow the series. */
const actOutcomeLabel = (o: string): string => ((ACT_OUTCOMES as readonly string[]).includes(o) ? o : 'other');

export interface BuildInfo {
  version: string;
  node: string;
}

export class HubMetrics {
  readonly actOutcomes = new Map<string, number>();
  /** Uses of notification action links, by what became of them (LINK_USES). */
  readonly linkUses = new Map<string, number>();
  readonly framesRejected = new Map<string, number>();
  readonly authFailures = new Map<string, number>();
  readonly subscribersDropped = new Map<SubscriberKind, number>();
  readonly subscribers = new Map<SubscriberKind, number>();
  framesApplied = 0;
  reconnects = 0;
  resyncs = 0;
  connectionsRefused = 0;
  /** `[metrics] per_pane` (follows a reload): one series per agent pane; off by default, for cardinality. */
  perPane = false;

  constructor(private readonly build: BuildInfo = { version: 'unknown', node: process.version }) {}

  private bump<K>(m: Map<K, number>, k: K, by = 1): void {
    m.set(k, (m.get(k) ?? 0) + by);
  }

  frameRejected(code: string): void {
    this.bump(this.framesRejected, code);
  }

  authFailed(endpoint: string, reason: string): void {
    this.bump(this.authFailures, `${endpoint}\u0000${reason}`);
  }

  subscriberDropped(kind: SubscriberKind): void {
    this.bump(this.subscribersDropped, kind);
  }

  subscriberCount(kind: SubscriberKind, delta: number): void {
    this.bump(this.subscribers, kind, delta);
  }

  linkUsed(use: (typeof LINK_USES)[number]): void {
    this.bump(this.linkUses, use);
  }

  actDone(outcome: string): void {
    this.bump(this.actOutcomes, actOutcomeLabel(outcome));
  }

  render(store: FleetReads, now: number): string {
    const hosts = store.hostMetrics().sort((a, b) => (a.host < b.host ? -1 : 1));
    const out: string[] = [];
    const metric = (name: string, type: 'gauge' | 'counter', help: string, lines: string[]) => {
      out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`, ...lines);
    };
    metric('tma_build_info', 'gauge', 'The running hub: its version and Node.js, as labels; always 1.', [
      `tma_build_info{version="${label(this.build.version)}",node="${label(this.build.node)}"} 1`,
    ]);
    metric(
      'tma_hub_agents',
      'gauge',
      'Agent panes held, by host and state class (every class, zeros included).',
      hosts.flatMap((h) => CLASSES.map((c) => `tma_hub_agents{host="${label(h.host)}",state="${c}"} ${h.classes[c]}`)),
    );
    metric(
      'tma_hub_host_up',
      'gauge',
      "1 while the host's link is up, else 0.",
      hosts.map((h) => `tma_hub_host_up{host="${label(h.host)}"} ${h.reachable ? 1 : 0}`),
    );
    metric(
      'tma_hub_host_oldest_blocked_timestamp_seconds',
      'gauge',
      "When the host's longest-blocked pane became blocked (Unix seconds); absent while none is blocked.",
      hosts
        .filter((h) => h.oldestBlockedMs !== null)
        .map((h) => `tma_hub_host_oldest_blocked_timestamp_seconds{host="${label(h.host)}"} ${(h.oldestBlockedMs! / 1000).toFixed(3)}`),
    );
    metric('tma_hub_act_total', 'counter', 'Remote acts answered, by outcome (unknown outcomes count as other).', [
      ...[...ACT_OUTCOMES, 'other'].map((k) => `tma_hub_act_total{outcome="${k}"} ${this.actOutcomes.get(k) ?? 0}`),
    ]);
    metric('tma_hub_notify_link_total', 'counter', 'Notification action links used, by what became of the use.', [
      ...LINK_USES.map((k) => `tma_hub_notify_link_total{use="${k}"} ${this.linkUses.get(k) ?? 0}`),
    ]);
    if (this.perPane) {
      // Title-free like every row that leaves a host: only names and the class.
      metric(
        'tma_hub_pane_state',
        'gauge',
        'One series per agent pane, labelled with its state class; always 1 ([metrics] per_pane).',
        store
          .rows()
          .map(
            (r) =>
              `tma_hub_pane_state{host="${label(r.host)}",server="${label(r.server)}",pane="${label(r.pane)}",agent="${label(r.agent)}",state="${classOf(r.state, r.attention)}"} 1`,
          ),
      );
    }
    metric('tma_hub_hosts_connected', 'gauge', 'Hosts whose link is up.', [`tma_hub_hosts_connected ${hosts.filter((h) => h.reachable).length}`]);
    metric('tma_hub_hosts_known', 'gauge', 'Hosts the hub holds, by condition.', [
      `tma_hub_hosts_known{condition="reachable"} ${hosts.filter((h) => h.reachable).length}`,
      `tma_hub_hosts_known{condition="stale"} ${hosts.filter((h) => h.stale).length}`,
      `tma_hub_hosts_known{condition="lost"} ${hosts.filter((h) => h.lost).length}`,
    ]);
    metric('tma_hub_rows', 'gauge', 'Agent rows held, all hosts.', [`tma_hub_rows ${hosts.reduce((n, h) => n + h.rows, 0)}`]);
    metric('tma_hub_reconnects_total', 'counter', 'Hellos from a host that had connected before.', [`tma_hub_reconnects_total ${this.reconnects}`]);
    metric('tma_hub_frames_applied_total', 'counter', 'Collector frames accepted.', [`tma_hub_frames_applied_total ${this.framesApplied}`]);
    metric('tma_hub_frames_rejected_total', 'counter', 'Collector frames refused, by error code.', [
      ...[...this.framesRejected].sort().map(([code, n]) => `tma_hub_frames_rejected_total{code="${label(code)}"} ${n}`),
    ]);
    metric('tma_hub_resyncs_total', 'counter', 'Fresh snapshots requested after a gap or an unknown server.', [`tma_hub_resyncs_total ${this.resyncs}`]);
    metric('tma_hub_auth_failures_total', 'counter', 'Requests refused for their credential.', [
      ...[...this.authFailures].sort().map(([k, n]) => {
        const [endpoint, reason] = k.split('\u0000');
        return `tma_hub_auth_failures_total{endpoint="${label(endpoint ?? '')}",reason="${label(reason ?? '')}"} ${n}`;
      }),
    ]);
    metric('tma_hub_connections_refused_total', 'counter', 'Connections closed at once: over the per-address or total cap.', [
      `tma_hub_connections_refused_total ${this.connectionsRefused}`,
    ]);
    metric('tma_hub_subscribers', 'gauge', 'Open fleet streams.', [
      `tma_hub_subscribers{transport="ws"} ${this.subscribers.get('ws') ?? 0}`,
      `tma_hub_subscribers{transport="sse"} ${this.subscribers.get('sse') ?? 0}`,
    ]);
    metric('tma_hub_subscribers_dropped_total', 'counter', 'Streams closed because the reader fell behind.', [
      `tma_hub_subscribers_dropped_total{transport="ws"} ${this.subscribersDropped.get('ws') ?? 0}`,
      `tma_hub_subscribers_dropped_total{transport="sse"} ${this.subscribersDropped.get('sse') ?? 0}`,
    ]);
    metric(
      'tma_hub_host_rows',
      'gauge',
      'Agent rows held per host.',
      hosts.map((h) => `tma_hub_host_rows{host="${label(h.host)}"} ${h.rows}`),
    );
    metric(
      'tma_hub_host_lag_seconds',
      'gauge',
      "Hub clock minus the host's last heartbeat clock (transit plus clock skew).",
      hosts.filter((h) => h.lagMs !== null).map((h) => `tma_hub_host_lag_seconds{host="${label(h.host)}"} ${(h.lagMs! / 1000).toFixed(3)}`),
    );
    metric(
      'tma_hub_host_silence_seconds',
      'gauge',
      'Seconds since the last frame from the host.',
      hosts
        .filter((h) => h.lastSeenMs !== null)
        .map((h) => `tma_hub_host_silence_seconds{host="${label(h.host)}"} ${(Math.max(0, now - h.lastSeenMs!) / 1000).toFixed(3)}`),
    );
    metric(
      'tma_hub_host_seq_behind',
      'gauge',
      'Sequences the host reports sent that the hub has not applied.',
      hosts.filter((h) => h.seqBehind !== null).map((h) => `tma_hub_host_seq_behind{host="${label(h.host)}"} ${h.seqBehind}`),
    );
    return `${out.join('\n')}\n`;
  }
}
