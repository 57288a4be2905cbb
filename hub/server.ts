// The hub process: HTTP routes on hono, WebSocket upgrades on ws, both on one node http server.
// Collectors publish on /v1/collect; clients read /v1/agents, /v1/subscribe and /metrics.
// Credentials are checked before any upgrade completes, and nothing here logs a token or a title.

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { getRequestListener } from '@hono/node-server';
import { jsonPartsResponse } from './parts-response.js';
import { warmPieces } from './pieces-warmer.js';
import { Hono, type Context } from 'hono';
import { pino, type Logger } from 'pino';
import { LOG_LEVELS } from '../shared/log-level.js';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Transport } from '../shared/fleet.js';
import type { FrameLink } from '../shared/link.js';
import { HEARTBEAT_MS, MAX_FRAME_BYTES } from '../shared/protocol.js';
import type { Selector } from '../shared/selectors.js';
import { DEFAULT_ACT_TIMEOUT_MS, registerActRoute } from './act-route.js';
import { TokenBook, authClient, authCollector, type AuthOutcome } from './auth.js';
import { parseListen, staleAfterDefault, type HubConfig, type ListenAddress } from './config.js';
import { LinkSession } from './link-session.js';
import { HubNotifier, type NotifyTiming } from './notify/hub-notifier.js';
import { registerNotificationsRoute } from './notify/route.js';
import { HubMetrics } from './metrics.js';
import { QueryError, modeFromQuery, selectorFromQuery } from './query.js';
import { dialSsh, type SshDialer, type SshTuning } from './ssh-link.js';
import { applyReload, type ReloadReport } from './reload.js';
import { FleetStore } from './store.js';
import { sseSink, wsSink } from './stream-sinks.js';
import { StreamHub, type StreamMode } from './streams.js';
import { CLOSE_GOING_AWAY, CLOSE_POLICY, closeReason, wsFrameLink } from './ws-link.js';
import { mountWebPage } from './web/assets.js';
import { DEFAULT_CONNECTION_LIMITS, limitConnections, type ConnectionLimits } from './request-limits.js';
import { LogSampler } from './sampled-log.js';
import { whoamiHandler } from './whoami.js';

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

/** Frames up to this size reach the protocol layer, which answers oversize ones with an error
 * frame; beyond it the socket layer closes the connection (1009) without reading further. */
const WS_MAX_PAYLOAD = 4 * MAX_FRAME_BYTES;

const json = (status: number, body: unknown) => ({ status, text: JSON.stringify(body) });
const errorBody = (message: string) => ({ schema: 1, error: message });

function authFailureMessage(r: Exclude<AuthOutcome<unknown>, { ok: true }>): string {
  if (r.reason === 'missing') return 'missing bearer token';
  if (r.reason === 'unknown') return 'unknown token';
  return 'this token is not valid for this endpoint';
}

function rejectUpgrade(socket: Duplex, status: number, message: string): void {
  const body = JSON.stringify(errorBody(message));
  const phrase: Record<number, string> = { 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found' };
  const auth = status === 401 ? 'WWW-Authenticate: Bearer\r\n' : '';
  socket.end(
    `HTTP/1.1 ${status} ${phrase[status] ?? 'Error'}\r\n${auth}Content-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

function defaultLogger(): Logger {
  // Logs belong on stderr, as with the CLI's logger: stdout is for what a caller reads.
  const level = (LOG_LEVELS as readonly string[]).includes(process.env.TMA_LOG_LEVEL ?? '') ? process.env.TMA_LOG_LEVEL! : 'info';
  return pino(
    { name: 'tma-hub', level, redact: ['authorization', 'token', '*.authorization', '*.token'] },
    pino.destination({ fd: 2, sync: true }),
  );
}

export async function startHub(opts: StartHubOptions): Promise<Hub> {
  let { config } = opts;
  const logger = opts.logger ?? defaultLogger();
  const clock = opts.clock ?? Date.now;
  const heartbeatMs = opts.heartbeatMs ?? HEARTBEAT_MS;
  const deadAfterMs = config.staleAfterMs ?? staleAfterDefault(heartbeatMs);
  const listen = typeof opts.listen === 'string' ? parseListen(opts.listen) : (opts.listen ?? config.listen);
  const limits = {
    maxBufferedBytes: opts.subscriberMaxBufferedBytes ?? 8 * 1024 * 1024,
    drainTimeoutMs: opts.sseDrainTimeoutMs ?? 10_000,
  };

  const book = new TokenBook(config);
  const metrics = new HubMetrics();
  const store = new FleetStore({ clock, lostAfterMs: config.lostAfterMs });
  for (const c of config.collectors) store.declare(c.host, 'ws');
  for (const s of config.ssh) store.declare(s.name, 'ssh');
  const stopWarming = warmPieces(store);
  const streams = new StreamHub(store, { coalesceMs: opts.streamCoalesceMs ?? 50, keepaliveMs: heartbeatMs, logger, metrics, clock });
  const sessions = new Map<string, LinkSession>();
  // Refused credentials are counted in /metrics every time, logged only as a sample.
  const refusalSampler = new LogSampler(10_000, clock);
  const logRefusal = (endpoint: string, reason: string) => {
    const t = refusalSampler.take(`${endpoint} ${reason}`);
    if (t.log) logger.warn({ endpoint, reason, ...(t.suppressed > 0 ? { suppressed_since_last: t.suppressed } : {}) }, 'request refused');
  };
  const links = new Set<LinkSession>();
  // What a reload may have to end: WebSocket links by the host their token binds, and fleet
  // streams by the client whose token opened them.
  const hostLinks = new Map<LinkSession, string>();
  const clientStreams = new Map<(reason: string) => void, string>();
  const trackStream = (client: string, end: (reason: string) => void, onGone: (cb: () => void) => void) => {
    clientStreams.set(end, client);
    onGone(() => clientStreams.delete(end));
  };
  // Its context learns the hub's address once listening (the default ntfy click target).
  const notifyContext = { hubUrl: '' };
  const notifier = new HubNotifier({
    journalPath: opts.notifyJournal ?? null, sinks: config.notify ?? [], logger, context: notifyContext, clock,
    ...(opts.notifyTiming ? { timing: opts.notifyTiming } : {}),
  });

  const sweepTimer = setInterval(() => store.sweep(), heartbeatMs);
  sweepTimer.unref();

  function attachLink(link: FrameLink, o: { transport: Transport; host: string }): LinkSession {
    const session = new LinkSession({
      link, store, metrics, logger, transport: o.transport, boundHost: o.host, heartbeatMs, deadAfterMs, clock,
      pendingSnapshotMaxBytes: opts.pendingSnapshotMaxBytes,
      rebindHost: o.transport !== 'ws',
      // One live link per host: a second collector is refused rather than taking turns with the
      // first. A link that has missed a heartbeat is likely gone and may be replaced.
      admit: (s) => {
        const prior = sessions.get(s.host);
        if (!prior || prior === s || !prior.isOpen || prior.silentMs > heartbeatMs * 1.5) return null;
        return `another collector already publishes for ${s.host} over a live link; this one is refused until that link ends`;
      },
      onHello: (s) => {
        const prior = sessions.get(s.host);
        sessions.set(s.host, s);
        if (prior && prior !== s) prior.close('replaced by a newer link for this host');
      },
      onEnd: (s) => {
        links.delete(s);
        if (sessions.get(s.host) === s) sessions.delete(s.host);
      },
      onNotify: (host, event) => notifier.receive(host, event),
    });
    links.add(session);
    return session;
  }

  // ---- HTTP routes ------------------------------------------------------------------------------

  const app = new Hono();

  const clientAuth = (c: Context, endpoint: string) => {
    const r = authClient(book, c.req.header('authorization'));
    if (r.ok) return null;
    metrics.authFailed(endpoint, r.reason);
    logRefusal(endpoint, r.reason);
    if (r.status === 401) c.header('WWW-Authenticate', 'Bearer');
    return c.json(errorBody(authFailureMessage(r)), r.status);
  };

  app.get('/healthz', (c) => c.json({ schema: 1, ok: true }));
  mountWebPage(app);
  app.get('/v1/whoami', whoamiHandler(book, clientAuth));

  app.get('/v1/agents', (c) => {
    const refused = clientAuth(c, '/v1/agents');
    if (refused) return refused;
    let sel: Selector;
    try {
      sel = selectorFromQuery(new URL(c.req.url).searchParams);
    } catch (e) {
      if (e instanceof QueryError) return c.json(errorBody(e.message), 400);
      throw e;
    }
    store.noteFullRead();
    return jsonPartsResponse(c, store.documentParts(sel));
  });

  registerActRoute(app, {
    book, store, metrics, logger, clock, session: (host) => sessions.get(host), timeoutMs: opts.actTimeoutMs ?? DEFAULT_ACT_TIMEOUT_MS, logRefusal,
  });

  app.get('/metrics', (c) => {
    const refused = clientAuth(c, '/metrics');
    if (refused) return refused;
    return c.body(metrics.render(store, clock()) + notifier.metricsText(), 200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' });
  });

  // An operator removes a host and its rows: one that is gone for good, or whose rows went wrong.
  app.delete('/v1/hosts/:name', (c) => {
    const r = authClient(book, c.req.header('authorization'));
    if (!r.ok || r.who.role !== 'operator') {
      const refused = clientAuth(c, '/v1/hosts');
      if (refused) return refused;
      metrics.authFailed('/v1/hosts', 'wrong-kind');
      return c.json(errorBody('forgetting a host needs an operator token; this one may only read'), 403);
    }
    const host = c.req.param('name');
    if (!store.hostStatuses().some((h) => h.host === host)) return c.json(errorBody(`no host ${host}`), 404);
    if (sessions.get(host)?.isOpen) {
      return c.json(errorBody(`${host} is connected right now and would only come back; stop its collector (or remove its entry) first`), 409);
    }
    store.forget(host);
    logger.info({ host, who: r.who.name }, 'host forgotten');
    return c.json({ schema: 1, forgotten: host }, 200);
  });

  registerNotificationsRoute(app, { notifier, clientAuth });

  app.get('/v1/subscribe', (c) => c.json(errorBody('open a WebSocket, or send Accept: text/event-stream'), 406));
  app.notFound((c) => c.json(errorBody('not found'), 404));
  app.onError((err, c) => {
    logger.error({ err: err.message }, 'request failed');
    return c.json(errorBody('internal error'), 500);
  });

  const honoListener = getRequestListener(app.fetch);

  /** Auth and query checks shared by both stream transports. */
  function streamRequest(req: IncomingMessage): { ok: true; selector: Selector; mode: StreamMode; client: string } | ({ ok: false } & ReturnType<typeof json>) {
    const r = authClient(book, req.headers.authorization);
    if (!r.ok) {
      metrics.authFailed('/v1/subscribe', r.reason);
      logRefusal('/v1/subscribe', r.reason);
      return { ok: false, ...json(r.status, errorBody(authFailureMessage(r))) };
    }
    try {
      const q = new URL(req.url ?? '/', 'http://hub').searchParams;
      return { ok: true, selector: selectorFromQuery(q, ['events', 'mode']), mode: modeFromQuery(q), client: r.who.name };
    } catch (e) {
      if (e instanceof QueryError) return { ok: false, ...json(400, errorBody(e.message)) };
      throw e;
    }
  }

  function serveSse(req: IncomingMessage, res: ServerResponse): void {
    const r = streamRequest(req);
    if (!r.ok) {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (r.status === 401) headers['www-authenticate'] = 'Bearer';
      res.writeHead(r.status, headers).end(r.text);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    streams.add((slow) => sseSink(res, limits, slow), r.selector, r.mode);
    trackStream(r.client, () => res.end(), (cb) => res.on('close', cb));
  }

  // Header and request timeouts are enforced on this interval (Node's default is 30 s).
  const server = createServer({ connectionsCheckingInterval: 2000 }, (req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'GET' && path === '/v1/subscribe' && (req.headers.accept ?? '').includes('text/event-stream')) {
      try {
        serveSse(req, res);
      } catch (e) {
        logger.error({ err: (e as Error).message }, 'stream setup failed');
        if (!res.headersSent) res.writeHead(500).end();
        else res.destroy();
      }
      return;
    }
    void honoListener(req, res);
  });

  limitConnections(server, { ...DEFAULT_CONNECTION_LIMITS, ...opts.connectionLimits }, (address) => {
    metrics.connectionsRefused++;
    logRefusal('(connection)', `too many connections from ${address} or in all`);
  });

  // ---- WebSocket upgrades -------------------------------------------------------------------------

  const collectWss = new WebSocketServer({ noServer: true, maxPayload: WS_MAX_PAYLOAD });
  const subscribeWss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 });

  function acceptCollector(ws: WebSocket, host: string): void {
    ws.on('error', (err: Error & { code?: string }) => {
      if (err.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH') metrics.frameRejected('too-large');
      logger.warn({ host, err: err.code ?? err.message }, 'collector socket error');
    });
    const session = attachLink(wsFrameLink(ws), { transport: 'ws', host });
    hostLinks.set(session, host);
    ws.on('close', () => hostLinks.delete(session));
  }

  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/v1/collect') {
      const r = authCollector(book, req.headers.authorization);
      if (!r.ok) {
        metrics.authFailed('/v1/collect', r.reason);
        logRefusal('/v1/collect', r.reason);
        return rejectUpgrade(socket, r.status, authFailureMessage(r));
      }
      collectWss.handleUpgrade(req, socket, head, (ws) => acceptCollector(ws, r.who.host));
      return;
    }
    if (path === '/v1/subscribe') {
      const r = streamRequest(req);
      if (!r.ok) return rejectUpgrade(socket, r.status, (JSON.parse(r.text) as { error: string }).error);
      subscribeWss.handleUpgrade(req, socket, head, (ws) => {
        ws.on('error', (err: Error & { code?: string }) => logger.warn({ err: err.code ?? err.message }, 'subscriber socket error'));
        streams.add((slow) => wsSink(ws, limits, slow), r.selector, r.mode);
        trackStream(r.client, (reason) => ws.close(CLOSE_POLICY, closeReason(reason)), (cb) => ws.on('close', cb));
      });
      return;
    }
    rejectUpgrade(socket, 404, 'not found');
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port, listen.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  const hostPart = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  const url = `http://${hostPart}:${addr.port}`;
  notifyContext.hubUrl = url;
  logger.info({ url }, 'hub listening');

  const sshDialers = new Map<string, SshDialer>();
  const dialTarget = (target: HubConfig['ssh'][number]) =>
    sshDialers.set(target.name, dialSsh({
      ...opts.ssh, target, logger,
      onLink: (link) => attachLink(link, { transport: 'ssh', host: target.name }),
      onDown: (reason) => store.unreachable(target.name, reason),
    }));
  config.ssh.forEach(dialTarget);

  const endAll = <K>(owners: Map<K, string>, who: string, end: (k: K) => void) => {
    const mine = [...owners].filter(([, o]) => o === who).map(([k]) => k);
    mine.forEach(end);
    return mine.length;
  };

  let closed: Promise<void> | null = null;
  return {
    url,
    port: addr.port,
    store,
    metrics,
    logger,
    attachLink,
    session: (host) => sessions.get(host),
    notifier,
    reload: (next) => applyReload({
      logger,
      current: () => config,
      commit: (c) => (config = c),
      setCredentials: (c) => book.replace(c),
      closeClientStreams: (name, reason) => endAll(clientStreams, name, (end) => end(reason)),
      closeHostLinks: (host, reason) => endAll(hostLinks, host, (s) => s.close(reason)),
      declareHost: (host, transport) => store.declare(host, transport),
      // A reload still settling when the hub closes must not start a dialer nobody stops.
      dialSsh: (target) => {
        if (closed === null) dialTarget(target);
      },
      stopSsh: async (name, reason) => {
        const d = sshDialers.get(name);
        sshDialers.delete(name);
        await d?.stop(reason);
      },
      setSinks: (sinks) => notifier.setSinks(sinks),
    }, next),
    close() {
      closed ??= (async () => {
        clearInterval(sweepTimer);
        stopWarming();
        notifier.close();
        await Promise.all([...sshDialers.values()].map((d) => d.stop()));
        streams.close();
        for (const s of [...links]) s.close('hub shutting down');
        for (const ws of collectWss.clients) ws.close(CLOSE_GOING_AWAY, 'hub shutting down');
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
        for (const ws of [...collectWss.clients, ...subscribeWss.clients]) ws.terminate();
        collectWss.close();
        subscribeWss.close();
      })();
      return closed;
    },
  };
}
