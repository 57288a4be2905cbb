// What a reload of hub.toml changes, worked out without touching anything: which client and host
// credentials came, went or changed, which `[[ssh]]` targets must be dialled, closed or redialled,
// whether the notification sinks differ, and which settings only a restart can apply. The hub's
// reload step (hub/config/reload.ts) acts on this; the summary is the one log line a reload writes.

import type { ClientCredential, CollectorCredential, HubConfig, SshTarget } from './config.js';

export interface ConfigDiff {
  clients: {
    added: string[];
    removed: string[];
    /** Same name, another token: streams opened with the old one must end. */
    tokenChanged: string[];
    /** Same name and token, another role: open streams may stay (both roles read). */
    roleChanged: string[];
  };
  hostTokens: { added: string[]; removed: string[]; changed: string[] };
  ssh: { added: SshTarget[]; removed: string[]; changed: SshTarget[]; unchanged: string[] };
  notifyChanged: boolean;
  /** Settings a reload applies at once (public_url, [metrics], a renewed [tls] certificate). */
  liveChanged: string[];
  /** Keys whose new value is read but takes effect only when the hub restarts. */
  needsRestart: string[];
}

function byKey<T>(list: readonly T[], key: (t: T) => string): Map<string, T> {
  return new Map(list.map((t) => [key(t), t]));
}

/** Entries of `before` and `after` by key: only in after, only in before, in both. */
function split<T>(before: readonly T[], after: readonly T[], key: (t: T) => string) {
  const b = byKey(before, key);
  const a = byKey(after, key);
  return {
    added: [...a.keys()].filter((k) => !b.has(k)),
    removed: [...b.keys()].filter((k) => !a.has(k)),
    both: [...a.keys()].filter((k) => b.has(k)).map((k) => [b.get(k)!, a.get(k)!] as const),
  };
}

function sameSsh(a: SshTarget, b: SshTarget): boolean {
  return a.host === b.host && a.port === b.port && a.user === b.user && a.identity === b.identity && a.known_hosts === b.known_hosts && a.command === b.command;
}

export function diffHubConfig(before: HubConfig, after: HubConfig): ConfigDiff {
  const cl = split<ClientCredential>(before.clients, after.clients, (c) => c.name);
  const ho = split<CollectorCredential>(before.collectors, after.collectors, (c) => c.host);
  const ss = split<SshTarget>(before.ssh, after.ssh, (s) => s.name);
  const afterSsh = byKey(after.ssh, (s) => s.name);
  const needsRestart: string[] = [];
  if (before.listen.host !== after.listen.host || before.listen.port !== after.listen.port) needsRestart.push('listen');
  if (before.staleAfterMs !== after.staleAfterMs) needsRestart.push('stale_after_secs');
  if (before.lostAfterMs !== after.lostAfterMs) needsRestart.push('lost_after_secs');
  // The server is HTTPS or plain from its start: turning [tls] on or off needs a new one.
  if (!before.tls !== !after.tls) needsRestart.push('tls');
  const tlsRenewed = !!before.tls && !!after.tls && (before.tls.cert !== after.tls.cert || before.tls.key !== after.tls.key);
  if (JSON.stringify(before.nats ?? null) !== JSON.stringify(after.nats ?? null)) needsRestart.push('nats');
  return {
    clients: {
      added: cl.added,
      removed: cl.removed,
      tokenChanged: cl.both.filter(([b, a]) => b.token !== a.token).map(([, a]) => a.name),
      roleChanged: cl.both.filter(([b, a]) => b.token === a.token && b.role !== a.role).map(([, a]) => a.name),
    },
    hostTokens: {
      added: ho.added,
      removed: ho.removed,
      changed: ho.both.filter(([b, a]) => b.token !== a.token).map(([, a]) => a.host),
    },
    ssh: {
      added: ss.added.map((n) => afterSsh.get(n)!),
      removed: ss.removed,
      changed: ss.both.filter(([b, a]) => !sameSsh(b, a)).map(([, a]) => a),
      unchanged: ss.both.filter(([b, a]) => sameSsh(b, a)).map(([, a]) => a.name),
    },
    notifyChanged: JSON.stringify(before.notify ?? []) !== JSON.stringify(after.notify ?? []),
    liveChanged: [
      ...(before.publicUrl !== after.publicUrl ? ['public_url'] : []),
      ...((before.metrics?.perPane ?? false) !== (after.metrics?.perPane ?? false) ? ['metrics.per_pane'] : []),
      ...((before.fleetHubs ?? []).join() !== (after.fleetHubs ?? []).join() ? ['fleet.hubs'] : []),
      ...(tlsRenewed ? ['tls'] : []),
    ],
    needsRestart,
  };
}

export function diffIsEmpty(d: ConfigDiff): boolean {
  return summaryParts(d).length === 0;
}

const count = (n: number, sign: string, what: string) => (n > 0 ? [`${sign}${n} ${what}${n === 1 ? '' : 's'}`] : []);

function summaryParts(d: ConfigDiff): string[] {
  const tokens = [
    ...count(d.clients.added.length, '+', 'client'),
    ...count(d.clients.removed.length, '-', 'client'),
    ...count(d.clients.tokenChanged.length, '~', 'client token'),
    ...count(d.clients.roleChanged.length, '~', 'client role'),
    ...count(d.hostTokens.added.length, '+', 'host token'),
    ...count(d.hostTokens.removed.length, '-', 'host token'),
    ...count(d.hostTokens.changed.length, '~', 'host token'),
  ];
  const ssh = [...d.ssh.added.map((s) => `+${s.name}`), ...d.ssh.removed.map((n) => `-${n}`), ...d.ssh.changed.map((s) => `~${s.name}`)];
  return [
    ...tokens,
    ...(ssh.length ? [`ssh: ${ssh.join(' ')}`] : []),
    ...(d.notifyChanged ? ['notify sinks replaced'] : []),
    ...(d.liveChanged.length ? [`${d.liveChanged.join(', ')} changed`] : []),
    ...(d.needsRestart.length ? [`${d.needsRestart.join(', ')} changed (takes effect on restart)`] : []),
  ];
}

/** The reload's log line: `reload: +1 client, -1 host token, ssh: +gpu2 -gpu1`. */
export function diffSummary(d: ConfigDiff): string {
  const parts = summaryParts(d);
  return `reload: ${parts.length ? parts.join(', ') : 'no changes'}`;
}
