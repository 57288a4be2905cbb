// The one node http server the hub listens on: SSE streams are answered on it directly, every
// other request goes to the hono app, and WebSocket upgrades are handed out by path. With `[tls]`
// it is an HTTPS server on the same port (wss:// for the upgrades), whose certificate a reload can
// replace without dropping a connection.

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { getRequestListener } from '@hono/node-server';
import type { Hono } from 'hono';
import type { Logger } from 'pino';
import type { ListenAddress } from '../config/config.js';
import { limitConnections, type ConnectionLimits } from './request-limits.js';
import { rejectUpgrade } from './upgrade.js';

type Upgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => void;

export interface NodeServerOptions {
  listen: ListenAddress;
  app: Hono;
  /** Serves `GET /v1/subscribe` with `Accept: text/event-stream`. */
  sse: (req: IncomingMessage, res: ServerResponse) => void;
  /** WebSocket upgrades by path; any other path is refused with 404. */
  upgrades: Record<string, Upgrade>;
  limits: ConnectionLimits;
  /** PEM certificate (chain) and key: serve HTTPS. */
  tls?: { cert: string; key: string };
  onConnectionRefused: (address: string) => void;
  logger: Logger;
}

export interface ListeningServer {
  url: string;
  port: number;
  /** A renewed certificate: new connections get it, open ones keep theirs. Throws on a bad pair. */
  setCertificate(tls: { cert: string; key: string }): void;
  /** Stop listening and cut every connection still open. */
  close(): Promise<void>;
}

const pathOf = (req: IncomingMessage) => (req.url ?? '/').split('?')[0]!;

export async function listenHttp(o: NodeServerOptions): Promise<ListeningServer> {
  const honoListener = getRequestListener(o.app.fetch);
  // Header and request timeouts are enforced on this interval (Node's default is 30 s).
  const listener = (req: IncomingMessage, res: ServerResponse) => {
    if (req.method === 'GET' && pathOf(req) === '/v1/subscribe' && (req.headers.accept ?? '').includes('text/event-stream')) {
      try {
        o.sse(req, res);
      } catch (e) {
        o.logger.error({ err: (e as Error).message }, 'stream setup failed');
        if (!res.headersSent) res.writeHead(500).end();
        else res.destroy();
      }
      return;
    }
    void honoListener(req, res);
  };
  const server = o.tls
    ? createHttpsServer({ connectionsCheckingInterval: 2000, cert: o.tls.cert, key: o.tls.key }, listener)
    : createServer({ connectionsCheckingInterval: 2000 }, listener);

  limitConnections(server, o.limits, o.onConnectionRefused);

  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    const upgrade = Object.hasOwn(o.upgrades, pathOf(req)) ? o.upgrades[pathOf(req)] : undefined;
    if (upgrade) return upgrade(req, socket, head);
    rejectUpgrade(socket, 404, 'not found');
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.listen.port, o.listen.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  const hostPart = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return {
    url: `${o.tls ? 'https' : 'http'}://${hostPart}:${addr.port}`,
    port: addr.port,
    setCertificate(tls) {
      if (!('setSecureContext' in server)) throw new Error('the hub serves plain HTTP: [tls] takes effect on restart');
      server.setSecureContext({ cert: tls.cert, key: tls.key });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
