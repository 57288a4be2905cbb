// A JSON body held as parts (the fleet document's cached per-host pieces), written to the node
// response as they are, without a fleet-sized copy per request. The parts go out a slice at a
// time, the next slice once the socket has taken the last: queueing the whole fleet (11 MB at 20k
// rows) in one corked write held the event loop for tens of milliseconds while every stream
// waited behind it, and kept all of it queued however slowly the reader read.

import type { ServerResponse } from 'node:http';
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
import type { Context } from 'hono';

/** Bytes handed to the socket per turn of the event loop. */
export const PARTS_SLICE_BYTES = 1 << 20;

export function jsonPartsResponse(c: Context, parts: readonly Buffer[]): Response {
  const outgoing = (c.env as { outgoing?: ServerResponse } | undefined)?.outgoing;
  // Outside the node adapter (app.request in a test) there is no response to write to.
  if (!outgoing) return c.body(Buffer.concat(parts) as Uint8Array<ArrayBuffer>, 200, { 'content-type': 'application/json' });
  let length = 0;
  for (const p of parts) length += p.length;
  outgoing.writeHead(200, { 'content-type': 'application/json', 'content-length': length });
  writeParts(outgoing, parts);
  return RESPONSE_ALREADY_SENT;
}

/**
 * Write `parts` in order and end `out`: about `sliceBytes` at a time, each slice in one corked
 * write, the next when the response has drained (or on the next turn if it took the slice at
 * once). The parts must not change meanwhile; the store's pieces never do once made.
 */
export function writeParts(out: ServerResponse, parts: readonly Buffer[], sliceBytes = PARTS_SLICE_BYTES): void {
  let i = 0;
  const next = (): void => {
    if (out.destroyed) return;
    let n = 0;
    let room = true;
    out.cork();
    while (i < parts.length && n < sliceBytes) {
      const p = parts[i++]!;
      n += p.length;
      room = out.write(p);
    }
    out.uncork();
    if (i >= parts.length) {
      out.end();
      return;
    }
    // A slice the kernel took at once drains on a process.nextTick, before any other socket's
    // turn: go on from the check phase either way, so other readers are served between slices.
    if (room) setImmediate(next);
    else out.once('drain', () => setImmediate(next));
  };
  next();
}
