// A tiny stand-in hub for collector tests: a real WebSocket server on loopback that records every
// frame and answers hello with a welcome the test chooses (or holds it until told).

import type { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';

export interface HubConn {
  headers: IncomingHttpHeaders;
  url: string;
  openedAt: number;
  frames: { at: number; text: string; frame: Record<string, unknown> }[];
  welcome(resumeFrom: number | null): void;
  send(frame: object): void;
  drop(): void;
}

export class FakeHub {
  readonly conns: HubConn[] = [];
  private constructor(
    private readonly wss: WebSocketServer,
    readonly port: number,
  ) {}

  /** `welcome`: what to answer a hello with; `'hold'` leaves it to the test. */
  static async start(opts: { token: string; welcome?: () => number | null | 'hold' }): Promise<FakeHub> {
    const wss = new WebSocketServer({
      host: '127.0.0.1',
      port: 0,
      verifyClient: (info: { req: { headers: IncomingHttpHeaders } }) => info.req.headers.authorization === `Bearer ${opts.token}`,
    });
    await new Promise<void>((r) => wss.once('listening', () => r()));
    const hub = new FakeHub(wss, (wss.address() as AddressInfo).port);
    wss.on('connection', (ws: WebSocket, req) => {
      const conn: HubConn = {
        headers: req.headers,
        url: req.url ?? '',
        openedAt: Date.now(),
        frames: [],
        welcome: (resumeFrom) => ws.send(JSON.stringify({ type: 'welcome', protocol: 1, resume_from: resumeFrom })),
        send: (frame) => ws.send(JSON.stringify(frame)),
        drop: () => ws.terminate(),
      };
      hub.conns.push(conn);
      ws.on('message', (data) => {
        const text = data.toString();
        const frame = JSON.parse(text) as Record<string, unknown>;
        conn.frames.push({ at: Date.now(), text, frame });
        if (frame.type === 'hello') {
          const w = opts.welcome ? opts.welcome() : null;
          if (w !== 'hold') conn.welcome(w);
        }
      });
    });
    return hub;
  }

  /** Every frame text received on any connection. */
  allText(): string[] {
    return this.conns.flatMap((c) => c.frames.map((f) => f.text));
  }

  close(): Promise<void> {
    for (const c of this.wss.clients) c.terminate();
    return new Promise((r) => this.wss.close(() => r()));
  }
}
