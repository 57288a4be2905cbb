// `/v1/collect`: a collector's WebSocket. The token is checked before the upgrade completes and
// binds the host the link publishes for; from then on the link belongs to the session registry.

import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { WebSocketServer, type WebSocket } from 'ws';
import { MAX_FRAME_BYTES } from '../../shared/protocol.js';
import type { LinkSessions } from '../link/sessions.js';
import { CLOSE_GOING_AWAY, wsFrameLink } from '../link/ws.js';
import type { HubMetrics } from '../metrics.js';
import { refusalMessage, type Gate } from './gate.js';
import { rejectUpgrade } from './upgrade.js';

/** Frames up to this size reach the protocol layer, which answers oversize ones with an error
 * frame; beyond it the socket layer closes the connection (1009) without reading further. */
const WS_MAX_PAYLOAD = 4 * MAX_FRAME_BYTES;

const ENDPOINT = '/v1/collect';

export class CollectEndpoint {
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: WS_MAX_PAYLOAD });

  constructor(private readonly o: { gate: Gate; sessions: LinkSessions; metrics: HubMetrics; logger: Logger }) {}

  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const r = this.o.gate.collector(req.headers.authorization, ENDPOINT);
    if (!r.ok) return rejectUpgrade(socket, r.status, refusalMessage(r));
    this.wss.handleUpgrade(req, socket, head, (ws) => this.accept(ws, r.who.host));
  }

  private accept(ws: WebSocket, host: string): void {
    ws.on('error', (err: Error & { code?: string }) => {
      if (err.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH') this.o.metrics.frameRejected('too-large');
      this.o.logger.warn({ host, err: err.code ?? err.message }, 'collector socket error');
    });
    const session = this.o.sessions.attach(wsFrameLink(ws), { transport: 'ws', host });
    // A reload that withdraws this host's token ends the links it opened.
    this.o.sessions.bindToToken(session, host, (cb) => ws.on('close', cb));
  }

  /** Shutting down: ask the collectors' sockets to close (they redial elsewhere or later). */
  goingAway(): void {
    for (const ws of this.wss.clients) ws.close(CLOSE_GOING_AWAY, 'hub shutting down');
  }

  /** After the server closed: drop whatever did not close. */
  terminate(): void {
    for (const ws of this.wss.clients) ws.terminate();
    this.wss.close();
  }
}
