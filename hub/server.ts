// The hub process, composed of its rooms: the store (store/), the collectors' links and their
// sessions (link/), the HTTP routes, streams and upgrades on one node server (http/), the
// configuration and its reload (config/), and the notifier (notify/). Nothing here logs a token or
// a title; credentials are checked (http/gate.ts) before any upgrade completes.

import { pino, type Logger } from 'pino';
import { LOG_LEVELS } from '../shared/log-level.js';
import type { Transport } from '../shared/fleet.js';
import type { FrameLink } from '../shared/link.js';
import { HEARTBEAT_MS } from '../shared/protocol.js';
import { parseListen, staleAfterDefault, type HubConfig, type ListenAddress } from './config/config.js';
import { applyReload, type ReloadReport } from './config/reload.js';
import { DEFAULT_ACT_TIMEOUT_MS } from './http/act.js';
import { ClientsSeen } from './http/clients-seen.js';
import { hubApp } from './http/app.js';
import { TokenBook } from './http/auth.js';
import { CollectEndpoint } from './http/collect.js';
import { Gate } from './http/gate.js';
import { listenHttp } from './http/node-server.js';
import { DEFAULT_CONNECTION_LIMITS, type ConnectionLimits } from './http/request-limits.js';
import { StreamHub } from './http/streams.js';
import { SubscribeEndpoint } from './http/subscribe.js';
import type { LinkSession } from './link/session.js';
import { LinkSessions } from './link/sessions.js';
import { SshDialers } from './link/ssh-dialers.js';
import type { SshTuning } from './link/ssh.js';
import { HubMetrics } from './metrics.js';
import { dirname, join } from 'node:path';
import { loadActionKey } from './notify/action-key.js';
import { mintLinks } from './notify/action-link.js';
import type { DeliverContext } from './notify/deliver.js';
import { HubNotifier } from './notify/hub-notifier.js';
import type { NotifyTiming } from './notify/sink-queue.js';
import { LookingBook } from './notify/looking.js';
import { NonceBook } from './notify/nonce-book.js';
import type { FleetStore } from './store/fleet-store.js';
import { MemoryFleetStore } from './store/memory-store.js';
import { startNatsFleet, type NatsFleet } from './nats/fleet.js';
import { warmPieces } from './store/warmer.js';

export interface StartHubOptions {
  config: HubConfig;
  /** Overrides `config.listen` (`HOST:PORT`). */
  listen?: string | ListenAddress;
  logger?: Logger;
  /** Heartbeat interval; tests shorten it. Staleness follows at three intervals unless configured. */
  heartbeatMs?: number;
  /** How long store changes are gathered before streams are updated. */
  streamCoalesceMs?: number;
  /** A subscriber whose unsent backlog exceeds this is dropped. */
  subscriberMaxBufferedBytes?: number;
  /** An SSE subscriber whose stream has not drained in this long is dropped. */
  sseDrainTimeoutMs?: number;
  clock?: () => number;
  /** Redial and timeout settings for `[[ssh]]` targets; tests shorten them. */
  ssh?: SshTuning;
  /** How long `POST /v1/act` waits for the host's answer. */
  actTimeoutMs?: number;
  /** Connection caps and timeouts; tests shrink them. */
  connectionLimits?: Partial<ConnectionLimits>;
  /** Bytes of incomplete snapshot parts one link may hold; tests shrink it. */
  pendingSnapshotMaxBytes?: number;
  /** The notification journal (JSONL); null or absent keeps it in memory only. */
  notifyJournal?: string | null;
  /** Grouping and retry timings of the notification sinks; tests shorten them. */
  notifyTiming?: Partial<NotifyTiming>;
  /** The key that signs notification action links; default a 0600 file beside the journal. */
  actionKey?: () => Buffer;
  /** The version `tma_build_info` reports (the CLI's; the hub does not import cli/). */
  version?: string;
  /** Where each client's last-seen time is kept (`tma hub clients` reads it); null or absent: memory only. */
  clientsSeenFile?: string | null;
  /** How often that file is rewritten when something changed; tests shorten it. */
  clientsSeenFlushMs?: number;
  /** `tma hub add-host`'s code files, and the collector builds served to hosts enrolling. */
  enrol?: { dir: string; files: string };
}

export interface Hub {
  url: string;
  port: number;
  store: FleetStore;
  metrics: HubMetrics;
  logger: Logger;
  /** Run the protocol over a link whose host binding comes from config (ssh, embedded). */
  attachLink(link: FrameLink, opts: { transport: Transport; host: string }): LinkSession;
  /** The open session publishing for `host`, if any (act forwarding uses it). */
  session(host: string): LinkSession | undefined;
  /** Fleet notifications: its sinks can be swapped with `notifier.setSinks` (a config reload). */
  notifier: HubNotifier;
  /** Apply a re-read hub.toml (SIGHUP) without disturbing what it does not change. */
  reload(next: HubConfig): Promise<ReloadReport>;
  close(): Promise<void>;
}

/** 127.0.0.0/8, ::1 and localhost: only this machine can reach it. */
export const isLoopback = (host: string): boolean => /^(127\.|localhost$|::1$|::ffff:127\.)/.test(host);

function defaultLogger(): Logger {
  // Logs belong on stderr, as with the CLI's logger: stdout is for what a caller reads.
  const level = (LOG_LEVELS as readonly string[]).includes(process.env.TMA_LOG_LEVEL ?? '') ? process.env.TMA_LOG_LEVEL! : 'info';
  return pino({ name: 'tma-hub', level, redact: ['authorization', 'token', '*.authorization', '*.token'] }, pino.destination({ fd: 2, sync: true }));
}

export async function startHub(opts: StartHubOptions): Promise<Hub> {
  let { config } = opts;
  const logger = opts.logger ?? defaultLogger();
  const clock = opts.clock ?? Date.now;
  const heartbeatMs = opts.heartbeatMs ?? HEARTBEAT_MS;
  const listen = typeof opts.listen === 'string' ? parseListen(opts.listen) : (opts.listen ?? config.listen);

  const book = new TokenBook(config, clock);
  const metrics = new HubMetrics({ version: opts.version ?? 'unknown', node: process.version });
  metrics.perPane = config.metrics?.perPane ?? false;
  let seen: ClientsSeen | null = null;
  const gate = new Gate({ book, metrics, logger, clock, onClient: (name) => seen?.touch(name) });
  // On NATS the whole fleet is listed before anything is served; without it, nothing changes.
  const nats: NatsFleet | null = config.nats
    ? await startNatsFleet(config.nats, { clock, lostAfterMs: config.lostAfterMs, logger, sinks: config.notify ?? [] })
    : null;
  const store: FleetStore = nats?.store ?? new MemoryFleetStore({ clock, lostAfterMs: config.lostAfterMs });
  for (const c of config.collectors) store.declare(c.host, 'ws');
  for (const s of config.ssh) store.declare(s.name, 'ssh');
  const stopWarming = warmPieces(store);
  const streams = new StreamHub(store, { coalesceMs: opts.streamCoalesceMs ?? 50, keepaliveMs: heartbeatMs, logger, metrics, clock });
  // The base of the links notifications carry: public_url, else the hub's address once listening.
  const stateDir = opts.notifyJournal ? dirname(opts.notifyJournal) : null;
  // Read at start, so a damaged key file stops the hub rather than every link later. On NATS the
  // fleet's key is derived from the fleet secret every hub is given, and so the book is shared.
  const ownKey = opts.actionKey ? null : nats ? nats.actionKey : loadActionKey(stateDir);
  const actionKey = opts.actionKey ?? (() => ownKey!);
  const nonces = nats?.nonces ?? new NonceBook(stateDir && join(stateDir, 'hub-action-nonces'), clock);
  const looking = new LookingBook(clock);
  const paneNow = (host: string, server: string, pane: string) => {
    const r = store.rows().find((x) => x.host === host && x.server === server && x.pane === pane);
    return r ? { state: r.state, episode_ms: r.episode_ms, prompt_id: r.prompt_id ?? null } : null;
  };
  const minter = {
    key: actionKey,
    clock,
    pane: paneNow,
    allowed: (host: string) => (store.hostStatuses().find((h) => h.host === host)?.collector_version != null ? store.actionsAllowed(host) : null),
  };
  const notifyContext: DeliverContext = { hubUrl: config.publicUrl ?? '', links: (sink, e) => mintLinks(minter, notifyContext.hubUrl, sink, e) };
  const notifier = new HubNotifier({
    fleet: { pane: paneNow, pageLooking: (h, s, p) => looking.looking(h, s, p) },
    journalPath: opts.notifyJournal ?? null,
    sinks: config.notify ?? [],
    logger,
    context: notifyContext,
    clock,
    ...(opts.notifyTiming ? { timing: opts.notifyTiming } : {}),
    ...(nats ? { journal: nats.notifyBook, shared: nats.notifyConsumers } : {}),
  });
  if (nats) nats.notifyConsumers.taker = notifier;
  const sessions = new LinkSessions({
    store,
    metrics,
    logger,
    heartbeatMs,
    clock,
    deadAfterMs: config.staleAfterMs ?? staleAfterDefault(heartbeatMs),
    pendingSnapshotMaxBytes: opts.pendingSnapshotMaxBytes,
    onNotify: (host, event) => notifier.receive(host, event),
    admitNotify: (host) => notifier.admit(host),
    // Read per welcome, so a reload that changes `[fleet] hubs` is told to the next link.
    fleetHubs: () => config.fleetHubs ?? [],
    ...(nats ? { admitHost: (host: string) => nats.store.admit(host) } : {}),
  });
  if (nats) {
    nats.store.onClaimLost = (host, reason) => sessions.session(host)?.close(reason);
    nats.serveHostRequests((host) => sessions.session(host));
  }
  /** The host's link here, else (on NATS) the hub that holds it. */
  const hostTarget = (host: string) => {
    const s = sessions.session(host);
    return s?.isOpen || !nats ? s : (nats.remote(host) ?? s);
  };

  const sweepTimer = setInterval(() => store.sweep(), heartbeatMs);
  sweepTimer.unref();

  const app = hubApp({
    gate,
    store,
    metrics,
    notifier,
    logger,
    clock,
    session: hostTarget,
    actTimeoutMs: opts.actTimeoutMs ?? DEFAULT_ACT_TIMEOUT_MS,
    ...(nats ? { slots: nats.slots, health: () => nats.health() } : {}),
    // Read at each request: a reload replaces `config`.
    sshTargets: () => config.ssh,
    links: { key: actionKey, nonces },
    looking,
    // The certificate is read at each request: a reload may renew it.
    ...(opts.enrol ? { enrol: { ...opts.enrol, cert: () => config.tls?.cert } } : {}),
  });
  const subscribe = new SubscribeEndpoint({
    gate,
    streams,
    logger,
    limits: { maxBufferedBytes: opts.subscriberMaxBufferedBytes ?? 8 * 1024 * 1024, drainTimeoutMs: opts.sseDrainTimeoutMs ?? 10_000 },
  });
  seen = new ClientsSeen({
    file: opts.clientsSeenFile ?? null,
    clock,
    open: () => subscribe.openClients(),
    ...(opts.clientsSeenFlushMs ? { intervalMs: opts.clientsSeenFlushMs } : {}),
    onError: (m) => logger.warn(m),
  });
  // A paired token past its expiry is refused at once (auth.ts); its open streams end here.
  const expiryTimer = setInterval(() => book.expiredClients().forEach((name) => subscribe.closeClient(name, `the token of client ${name} expired`)), 1000);
  expiryTimer.unref();
  const collect = new CollectEndpoint({ gate, sessions, metrics, logger });
  // A hub that cannot listen must not leave its NATS connection (and its timers) behind.
  const listening = listenHttp({
    listen,
    app,
    logger,
    sse: (req, res) => subscribe.serveSse(req, res),
    upgrades: {
      '/v1/collect': (req, socket, head) => collect.upgrade(req, socket, head),
      '/v1/subscribe': (req, socket, head) => subscribe.upgrade(req, socket, head),
    },
    limits: { ...DEFAULT_CONNECTION_LIMITS, ...opts.connectionLimits },
    ...(config.tls ? { tls: config.tls } : {}),
    onConnectionRefused: (address) => {
      metrics.connectionsRefused++;
      gate.logRefusal('(connection)', `too many connections from ${address} or in all`);
    },
  });
  const http = await listening.catch(async (e: unknown) => {
    await nats?.close();
    throw e;
  });
  notifyContext.hubUrl = config.publicUrl ?? http.url;
  logger.info({ url: http.url, ...(config.publicUrl ? { public_url: config.publicUrl } : {}) }, 'hub listening');
  if (!isLoopback(listen.host) && !config.tls) {
    logger.warn(
      { listen: `${listen.host}:${http.port}` },
      'the hub speaks plain HTTP beyond loopback: tokens travel in clear; add [tls] to hub.toml (tma hub tls --name HOST), keep it on loopback behind a TLS proxy, or use the ssh transport',
    );
  }

  const ssh = new SshDialers({ sessions, store, logger, tuning: opts.ssh, ...(nats ? { mayDial: (name: string) => nats.store.admit(name) } : {}) });
  config.ssh.forEach((target) => ssh.dial(target));

  let closed: Promise<void> | null = null;
  return {
    url: http.url,
    port: http.port,
    store,
    metrics,
    logger,
    attachLink: (link, o) => sessions.attach(link, o),
    session: (host) => sessions.session(host),
    notifier,
    reload: (next) =>
      applyReload(
        {
          logger,
          current: () => config,
          commit: (c) => {
            config = c;
            metrics.perPane = c.metrics?.perPane ?? false;
            notifyContext.hubUrl = c.publicUrl ?? http.url;
          },
          setCredentials: (c) => book.replace(c),
          closeClientStreams: (name, reason) => subscribe.closeClient(name, reason),
          closeHostLinks: (host, reason) => sessions.closeTokenLinks(host, reason),
          declareHost: (host, transport) => store.declare(host, transport),
          // A reload still settling when the hub closes must not start a dialer nobody stops.
          dialSsh: (target) => {
            if (closed === null) ssh.dial(target);
          },
          stopSsh: (name, reason) => ssh.stop(name, reason),
          setSinks: (sinks) => notifier.setSinks(sinks),
          setCertificate: (tls) => http.setCertificate(tls),
          forgetClient: (name) => seen?.forget(name),
        },
        next,
      ),
    close() {
      closed ??= (async () => {
        clearInterval(sweepTimer);
        clearInterval(expiryTimer);
        seen?.close();
        stopWarming();
        notifier.close();
        await ssh.stopAll();
        streams.close();
        sessions.closeAll('hub shutting down');
        await nats?.close();
        collect.goingAway();
        await http.close();
        collect.terminate();
        subscribe.terminate();
      })();
      return closed;
    },
  };
}
