// A loopback TCP relay that a test puts between a collector and its hub, so it can cut the
// connections (both sockets die, like a network drop), hold new connections off, or make the open
// ones go silent without closing anything (like a route that stopped carrying packets). It also reads the WebSocket messages going
// through, so a test can see exactly what each side sent on each connection.

import { createServer, connect, type Server, type Socket } from 'node:net';

export type Direction = 'up' | 'down';

export interface Tapped {
  /** Which relayed connection (0-based, in accept order) carried the message. */
  conn: number;
  /** `up` = client → target (collector → hub), `down` = target → client. */
  dir: Direction;
  text: string;
  at: number;
}

/**
 * Reassembles WebSocket text messages from one direction of a raw byte stream: the HTTP upgrade
 * head first, then frames (masked or not). Control frames are skipped; only what the protocol
 * layer sees is kept.
 */
export class WsTextTap {
  private buf = Buffer.alloc(0);
  private inHead = true;
  private parts: Buffer[] = [];

  feed(chunk: Buffer): string[] {
    this.buf = Buffer.concat([this.buf, chunk]);
    const out: string[] = [];
    if (this.inHead) {
      const end = this.buf.indexOf('\r\n\r\n');
      if (end < 0) return out;
      this.buf = this.buf.subarray(end + 4);
      this.inHead = false;
    }
    for (;;) {
      if (this.buf.length < 2) return out;
      const b0 = this.buf[0]!;
      const b1 = this.buf[1]!;
      let len = b1 & 0x7f;
      let at = 2;
      if (len === 126) {
        if (this.buf.length < 4) return out;
        len = this.buf.readUInt16BE(2);
        at = 4;
      } else if (len === 127) {
        if (this.buf.length < 10) return out;
        len = Number(this.buf.readBigUInt64BE(2));
        at = 10;
      }
      const masked = (b1 & 0x80) !== 0;
      const mask = masked ? this.buf.subarray(at, at + 4) : null;
      if (masked) at += 4;
      if (this.buf.length < at + len) return out;
      const payload = Buffer.from(this.buf.subarray(at, at + len));
      this.buf = this.buf.subarray(at + len);
      if (mask) for (let i = 0; i < payload.length; i++) payload[i]! ^= mask[i % 4]!;
      const opcode = b0 & 0x0f;
      if (opcode >= 0x8) continue;
      this.parts.push(payload);
      if (b0 & 0x80) {
        if (opcode === 0x1 || opcode === 0x0) out.push(Buffer.concat(this.parts).toString('utf8'));
        this.parts = [];
      }
    }
  }
}

export interface TcpProxy {
  port: number;
  /** Every WebSocket text message relayed so far. */
  tapped: Tapped[];
  /** Connections accepted and relayed so far. */
  readonly connections: number;
  /** Destroy every relayed connection, both sides, at once. */
  sever(): void;
  /** While refusing, a new connection is closed as soon as it is accepted. */
  refuse(on: boolean): void;
  /**
   * The connections open now go silent for good: bytes are swallowed both ways, and one side
   * closing is not passed on to the other.
   */
  stall(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  interface Pair {
    sockets: [Socket, Socket];
    stalled: boolean;
  }
  const pairs = new Set<Pair>();
  const tapped: Tapped[] = [];
  let refusing = false;
  let accepted = 0;

  const relay = (pair: Pair, from: Socket, to: Socket, conn: number, dir: Direction) => {
    const tap = new WsTextTap();
    from.on('data', (chunk: Buffer) => {
      if (pair.stalled) return;
      for (const text of tap.feed(chunk)) tapped.push({ conn, dir, text, at: Date.now() });
      to.write(chunk);
    });
  };

  const server: Server = createServer((client) => {
    if (refusing) {
      client.destroy();
      return;
    }
    const conn = accepted++;
    const upstream = connect(target.port, target.host);
    const pair: Pair = { sockets: [client, upstream], stalled: false };
    pairs.add(pair);
    const end = (from: Socket) => {
      // A stalled route carries no FIN either: the far side learns nothing until it gives up itself.
      if (pair.stalled) {
        from.destroy();
        if (pair.sockets.every((s) => s.destroyed)) pairs.delete(pair);
        return;
      }
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    for (const s of pair.sockets) {
      s.on('error', () => end(s));
      s.on('close', () => end(s));
    }
    relay(pair, client, upstream, conn, 'up');
    relay(pair, upstream, client, conn, 'down');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const addr = server.address();
  if (addr === null || typeof addr === 'string') throw new Error('proxy has no TCP address');

  const sever = () => {
    for (const { sockets } of [...pairs]) for (const s of sockets) s.destroy();
    pairs.clear();
  };
  return {
    port: addr.port,
    tapped,
    get connections() {
      return accepted;
    },
    sever,
    refuse: (on) => void (refusing = on),
    stall: () => pairs.forEach((p) => (p.stalled = true)),
    close: () =>
      new Promise<void>((resolve) => {
        sever();
        server.close(() => resolve());
      }),
  };
}
