import { once } from 'node:events';
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { writeParts } from '../../hub/http/parts-response.js';

const ends: (() => void)[] = [];
afterEach(() => {
  for (const end of ends.splice(0)) end();
});

/** Parts of random sizes and bytes, like a fleet's host pieces (a few hundred bytes to 40 KB). */
function someParts(total: number): Buffer[] {
  const parts: Buffer[] = [];
  let n = 0;
  let seed = 7;
  const rnd = () => (seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32;
  while (n < total) {
    const b = Buffer.alloc(200 + Math.floor(rnd() * 40_000));
    for (let i = 0; i < b.length; i += 97) b[i] = Math.floor(rnd() * 256);
    parts.push(b);
    n += b.length;
  }
  return parts;
}

/** A loopback server whose every response is `respond(res)`; resolves with its address and the responses it made. */
async function serve(respond: (res: ServerResponse) => void): Promise<{ url: string; responses: ServerResponse[] }> {
  const responses: ServerResponse[] = [];
  const server = createServer((_req, res) => {
    responses.push(res);
    respond(res);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  ends.push(() => {
    server.closeAllConnections();
    server.close();
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, responses };
}

function get(url: string): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent: false }, resolve);
    req.on('error', reject);
    req.end();
  });
}

describe('writeParts', () => {
  it('sends the parts byte for byte to a reader that reads slowly, one slice queued at a time', async () => {
    const parts = someParts(6_000_000);
    const slice = 256 * 1024;
    const largest = Math.max(...parts.map((p) => p.length));
    let queuedMax = 0;
    const { url } = await serve((res) => {
      res.writeHead(200, { 'content-length': parts.reduce((a, p) => a + p.length, 0) });
      writeParts(res, parts, slice);
      // What waits in the response beside what the socket took: never the whole body.
      queuedMax = Math.max(queuedMax, res.writableLength);
      const watch = setInterval(() => (queuedMax = Math.max(queuedMax, res.writableLength)), 1);
      res.on('close', () => clearInterval(watch));
    });
    const res = await get(url);
    const chunks: Buffer[] = [];
    let reads = 0;
    res.on('data', (c: Buffer) => {
      chunks.push(c);
      // Stall now and then, so the hub side meets a full socket and has to wait for it to drain.
      if (++reads % 20 === 0) {
        res.pause();
        setTimeout(() => res.resume(), 30);
      }
    });
    await once(res, 'end');
    expect(Buffer.concat(chunks).equals(Buffer.concat(parts))).toBe(true);
    expect(queuedMax).toBeGreaterThan(0);
    expect(queuedMax).toBeLessThanOrEqual(slice + largest);
  });

  it('lets the event loop turn while a large body goes out', async () => {
    const parts = someParts(8_000_000);
    let turnsDuring = 0;
    const { url } = await serve((res) => {
      res.writeHead(200, { 'content-length': parts.reduce((a, p) => a + p.length, 0) });
      let writing = true;
      const tick = (): void => {
        if (!writing) return;
        turnsDuring++;
        setImmediate(tick);
      };
      setImmediate(tick);
      res.on('finish', () => (writing = false));
      writeParts(res, parts, 64 * 1024);
    });
    const res = await get(url);
    let bytes = 0;
    res.on('data', (c: Buffer) => (bytes += c.length));
    await once(res, 'end');
    expect(bytes).toBe(parts.reduce((a, p) => a + p.length, 0));
    // 8 MB in 64 KB slices is over a hundred slices, each its own turn.
    expect(turnsDuring).toBeGreaterThan(50);
  });

  it('stops writing when the reader goes away mid-body', async () => {
    const parts = someParts(8_000_000);
    const { url, responses } = await serve((res) => {
      res.writeHead(200, { 'content-length': parts.reduce((a, p) => a + p.length, 0) });
      writeParts(res, parts, 64 * 1024);
    });
    const res = await get(url);
    await once(res, 'data');
    res.destroy();
    const served = responses[0]!;
    if (!served.destroyed) await once(served, 'close');
    expect(served.writableFinished).toBe(false);
    // A write after the close would raise ERR_STREAM_DESTROYED on the response: give it the chance.
    const errors: Error[] = [];
    served.on('error', (e) => errors.push(e));
    await new Promise((r) => setTimeout(r, 100));
    expect(errors).toEqual([]);
  });
});
