// `/v1/subscribe`: fleet streams over SSE and WebSocket. Both are served beside hono, on the node
// server itself, so a stream writes to its socket directly; both check the credential through the
// same gate and read the same query. What a reload may have to end is kept here: each stream by
// the client whose token opened it.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { WebSocketServer } from 'ws';
import type { Selector } from '../../shared/selectors.js';
import { CLOSE_POLICY, closeReason } from '../link/ws.js';
import { errorBody, refusalMessage, type Gate } from './gate.js';
import { QueryError, modeFromQuery, selectorFromQuery } from './query.js';
import { sseSink, wsSink, type SinkLimits } from './stream-sinks.js';
import type { StreamHub, StreamMode } from './streams.js';
import { rejectUpgrade } from './upgrade.js';

const ENDPOINT = '/v1/subscribe';

type StreamRequest = { ok: true; selector: Selector; mode: StreamMode; client: string } | { ok: false; status: 400 | 401 | 403; message: string };

export class SubscribeEndpoint {
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 });
  /** Open streams, each by the client whose token opened it. */
  private readonly byClient = new Map<(reason: string) => void, string>();

  constructor(private readonly o: { gate: Gate; streams: StreamHub; limits: SinkLimits; logger: Logger }) {}

  /** Auth and query checks shared by both stream transports. */
  private request(req: IncomingMessage): StreamRequest {
    const r = this.o.gate.client(req.headers.authorization, ENDPOINT);
    if (!r.ok) return { ok: false, status: r.status, message: refusalMessage(r) };
    try {
      const q = new URL(req.url ?? '/', 'http://hub').searchParams;
      return { ok: true, selector: selectorFromQuery(q, ['events', 'mode']), mode: modeFromQuery(q), client: r.who.name };
    } catch (e) {
      if (e instanceof QueryError) return { ok: false, status: 400, message: e.message };
      throw e;
    }
  }

  private track(client: string, end: (reason: string) => void, onGone: (cb: () => void) => void): void {
    this.byClient.set(end, client);
    onGone(() => this.byClient.delete(end));
  }

  /** A GET asking for `text/event-stream`. */
  serveSse(req: IncomingMessage, res: ServerResponse): void {
    const r = this.request(req);
    if (!r.ok) {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (r.status === 401) headers['www-authenticate'] = 'Bearer';
      res.writeHead(r.status, headers).end(JSON.stringify(errorBody(r.message)));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    this.o.streams.add((slow) => sseSink(res, this.o.limits, slow), r.selector, r.mode);
    this.track(
      r.client,
      () => res.end(),
      (cb) => res.on('close', cb),
    );
  }

  /** A WebSocket upgrade of `/v1/subscribe`. */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const r = this.request(req);
    if (!r.ok) return rejectUpgrade(socket, r.status, r.message);
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      ws.on('error', (err: Error & { code?: string }) => this.o.logger.warn({ err: err.code ?? err.message }, 'subscriber socket error'));
      this.o.streams.add((slow) => wsSink(ws, this.o.limits, slow), r.selector, r.mode);
      this.track(
        r.client,
        (reason) => ws.close(CLOSE_POLICY, closeReason(reason)),
        (cb) => ws.on('close', cb),
      );
    });
  }

  /** The clients with a stream open now (each once). */
  openClients(): string[] {
    return [...new Set(this.byClient.values())];
  }

  /** End every stream `client` opened (its token was withdrawn); returns how many. */
  closeClient(client: string, reason: string): number {
    const mine = [...this.byClient].filter(([, c]) => c === client).map(([end]) => end);
    mine.forEach((end) => end(reason));
    return mine.length;
  }

  /** After the server closed: drop what is left of the WebSocket streams. */
  terminate(): void {
    for (const ws of this.wss.clients) ws.terminate();
    this.wss.close();
  }
}
