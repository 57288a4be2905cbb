// Limits that keep one client from taking the hub's memory or descriptors: how many connections an
// address (and everyone together) may hold, how long a request may take to send its headers, how
// long a connection may sit idle, and how much of a body is read before it is refused.

import type { Server } from 'node:http';
import type { Socket } from 'node:net';

export interface ConnectionLimits {
  perAddress: number;
  total: number;
  /** A request whose headers have not all arrived after this long is dropped. */
  headersTimeoutMs: number;
  /** A connection with no traffic either way for this long is closed (streams send keepalives). */
  idleTimeoutMs: number;
}

export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = {
  perAddress: 256,
  total: 2048,
  headersTimeoutMs: 10_000,
  idleTimeoutMs: 120_000,
};

/** Count connections as they open and close; refuse (destroy) those over a cap. */
export function limitConnections(server: Server, l: ConnectionLimits, onRefused: (address: string) => void): void {
  const perAddress = new Map<string, number>();
  let total = 0;
  server.headersTimeout = l.headersTimeoutMs;
  server.requestTimeout = Math.max(l.headersTimeoutMs, 60_000);
  server.on('connection', (socket: Socket) => {
    const addr = socket.remoteAddress ?? '?';
    const mine = perAddress.get(addr) ?? 0;
    if (mine >= l.perAddress || total >= l.total) {
      onRefused(addr);
      socket.destroy();
      return;
    }
    perAddress.set(addr, mine + 1);
    total++;
    socket.setTimeout(l.idleTimeoutMs, () => socket.destroy());
    socket.once('close', () => {
      total--;
      const n = (perAddress.get(addr) ?? 1) - 1;
      if (n <= 0) perAddress.delete(addr);
      else perAddress.set(addr, n);
    });
  });
}

export class BodyTooLarge extends Error {}

/**
 * Read a request body as text, stopping as soon as it passes `maxBytes`: a 50 MiB body costs no
 * more than the limit. A declared Content-Length over the limit is refused before reading at all.
 */
export async function readBodyLimited(req: Request, maxBytes: number): Promise<string> {
  const declared = Number(req.headers.get('content-length') ?? NaN);
  if (declared > maxBytes) throw new BodyTooLarge(`body larger than ${maxBytes} bytes`);
  if (!req.body) return '';
  const reader = (req.body as ReadableStream<Uint8Array>).getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      void reader.cancel().catch(() => undefined);
      throw new BodyTooLarge(`body larger than ${maxBytes} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}
