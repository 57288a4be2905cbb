// A JSON body held as parts (the fleet document's cached per-host pieces), written to the node
// response as they are: one write of many buffers instead of a fleet-sized copy per request.

import type { ServerResponse } from 'node:http';
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
import type { Context } from 'hono';

export function jsonPartsResponse(c: Context, parts: readonly Buffer[]): Response {
  const outgoing = (c.env as { outgoing?: ServerResponse } | undefined)?.outgoing;
  // Outside the node adapter (app.request in a test) there is no response to write to.
  if (!outgoing) return c.body(Buffer.concat(parts) as Uint8Array<ArrayBuffer>, 200, { 'content-type': 'application/json' });
  let length = 0;
  for (const p of parts) length += p.length;
  outgoing.writeHead(200, { 'content-type': 'application/json', 'content-length': length });
  outgoing.cork();
  for (const p of parts) outgoing.write(p);
  outgoing.uncork();
  outgoing.end();
  return RESPONSE_ALREADY_SENT;
}
