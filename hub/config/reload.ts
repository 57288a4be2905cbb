// Applying a re-read hub.toml to a running hub. Credentials are swapped first, so a token that was
// removed is refused from the very next request; then whatever was opened with a credential that
// no longer holds is closed, `[[ssh]]` targets are dialled, closed or redialled, and the sinks are
// replaced. Links and streams the change does not concern are left exactly as they are.

import { existsSync } from 'node:fs';
import type { Logger } from 'pino';
import type { HubConfig, SshTarget } from './config.js';
import { diffHubConfig, diffSummary, type ConfigDiff } from './diff.js';
import type { NotifySinkConfig } from '../notify/sink-config.js';

/** The parts of a running hub a reload acts on (hub/server.ts provides them). */
export interface ReloadTarget {
  logger: Logger;
  current(): HubConfig;
  /** Swap the credentials every following request and upgrade is checked against. */
  setCredentials(next: Pick<HubConfig, 'collectors' | 'clients'>): void;
  /** End the fleet streams opened with this client's token; returns how many. */
  closeClientStreams(name: string, reason: string): number;
  /** End the WebSocket links authenticated as this host's collector; returns how many. */
  closeHostLinks(host: string, reason: string): number;
  declareHost(host: string, transport: 'ws' | 'ssh'): void;
  dialSsh(target: SshTarget): void;
  /** Stop dialling the target and close its link (which ends the remote collector). */
  stopSsh(name: string, reason: string): Promise<void>;
  setSinks(sinks: NotifySinkConfig[]): void;
  /** A renewed `[tls]` certificate: the next handshake uses it. */
  setCertificate?(tls: { cert: string; key: string }): void;
  /** A client removed from hub.toml leaves the last-seen record. */
  forgetClient?(name: string): void;
  commit(next: HubConfig): void;
}

export interface ReloadReport {
  diff: ConfigDiff;
  summary: string;
}

export async function applyReload(t: ReloadTarget, next: HubConfig): Promise<ReloadReport> {
  const diff = diffHubConfig(t.current(), next);
  t.setCredentials(next);
  t.commit(next);

  const gone = (what: string) => `${what} by a reload of hub.toml`;
  for (const name of diff.clients.removed) {
    t.closeClientStreams(name, gone(`client ${name} was removed`));
    t.forgetClient?.(name);
  }
  for (const name of diff.clients.tokenChanged) t.closeClientStreams(name, gone(`the token of client ${name} was changed`));
  for (const host of diff.hostTokens.removed) t.closeHostLinks(host, gone(`the token for host ${host} was removed`));
  for (const host of diff.hostTokens.changed) t.closeHostLinks(host, gone(`the token for host ${host} was changed`));
  for (const host of diff.hostTokens.added) t.declareHost(host, 'ws');

  // A changed target is closed before it is dialled again, so two links never race for one host.
  await Promise.all([
    ...diff.ssh.removed.map((name) => t.stopSsh(name, gone(`ssh entry ${name} was removed`))),
    ...diff.ssh.changed.map((s) => t.stopSsh(s.name, gone(`ssh entry ${s.name} was changed`))),
  ]);
  for (const s of [...diff.ssh.added, ...diff.ssh.changed]) {
    t.declareHost(s.name, 'ssh');
    t.dialSsh(s);
  }
  if (diff.notifyChanged) t.setSinks(next.notify ?? []);
  if (diff.liveChanged.includes('tls') && next.tls) t.setCertificate?.(next.tls);

  const summary = diffSummary(diff);
  t.logger.info(
    {
      clients_added: diff.clients.added,
      clients_removed: diff.clients.removed,
      host_tokens_added: diff.hostTokens.added,
      host_tokens_removed: diff.hostTokens.removed,
      host_tokens_changed: diff.hostTokens.changed,
      ...(diff.needsRestart.length ? { needs_restart: diff.needsRestart } : {}),
    },
    summary,
  );
  return { diff, summary };
}

/**
 * Re-read `file` on SIGHUP and apply it. A file that does not load (TOML, schema or a token file
 * it cannot read) leaves the running config as it is and says why in one line. A zero-config hub
 * (`optional`) reads the file once it exists (`tma hub token` creates it); until then there is
 * nothing to re-read, and the signal says so instead of ending the hub. Installed before the hub starts, so a reload sent while it starts (systemd may) does not
 * end it either: that signal is applied once the hub is attached. Signals arriving during a reload
 * are applied one after another.
 */
export function reloadOnSignal(
  file: string | null,
  load: (file: string, warn: (line: string) => void) => HubConfig,
  optional = false,
): { attach(hub: { logger: Logger; reload(next: HubConfig): Promise<ReloadReport> }): void; stop(): void } {
  let hub: { logger: Logger; reload(next: HubConfig): Promise<ReloadReport> } | null = null;
  let early = false;
  let queue: Promise<unknown> = Promise.resolve();
  const once = async () => {
    const h = hub!;
    if (file === null || (optional && !existsSync(file))) {
      h.logger.info(`reload: no hub.toml${file ? ` at ${file}` : ''} (zero-config hub): nothing to reload`);
      return;
    }
    let next: HubConfig;
    try {
      next = load(file, (line) => h.logger.warn(line));
    } catch (e) {
      h.logger.error({ file }, `reload failed, keeping the running config: ${(e as Error).message}`);
      return;
    }
    try {
      await h.reload(next);
    } catch (e) {
      h.logger.error({ file, err: (e as Error).message }, 'reload could not be applied in full');
    }
  };
  const onSignal = () => {
    if (hub === null) early = true;
    else queue = queue.then(once);
  };
  process.on('SIGHUP', onSignal);
  return {
    attach(h) {
      hub = h;
      if (early) onSignal();
    },
    stop: () => void process.off('SIGHUP', onSignal),
  };
}
