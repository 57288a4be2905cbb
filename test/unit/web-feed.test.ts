// The page's feed (hub/web/feed.js) in node with a scripted fetch: it asks for the changes
// stream with the token in the Authorization header, hands on whole documents built from the
// changes, and starts again from the fresh document after a reconnect, keeping nothing from the
// stream before.

import { afterEach, describe, expect, it, vi } from 'vitest';
import { startFeed } from '../../hub/web/feed.js';

const row = (pane: string, state: string) => ({ host: 'h', server: 's', pane, state, locator: `x:${pane.slice(1)}.0` });
const hostH = { host: 'h', reachable: true, stale: false, last_seen_ms: 1, servers: [] };
const changes = (upserts: unknown[], removals: unknown[] = []) => ({ schema: 1, type: 'changes', at_ms: 1, upserts, removals, hosts: [], hosts_gone: [] });

/** One stream connection: these lines, then the hub closes it. */
function sse(lines: unknown[]): Response {
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      for (const l of lines) c.enqueue(new TextEncoder().encode(`: keepalive\n\ndata: ${JSON.stringify(l)}\n\n`));
      c.close();
    },
  });
  return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream', date: new Date().toUTCString() } });
}

afterEach(() => vi.unstubAllGlobals());

describe('web page: the feed on the changes stream', () => {
  it('applies changes to the first document and starts from scratch on each reconnect', async () => {
    const connections = [
      [{ schema: 1, agents: [row('%1', 'working')], hosts: [hostH] }, changes([row('%2', 'blocked')]), changes([], [{ host: 'h', server: 's', pane: '%1' }])],
      // Out of step: changes before a document. Refused; the feed reconnects again.
      [changes([row('%7', 'idle')])],
      [{ schema: 1, agents: [row('%3', 'idle')], hosts: [hostH] }, changes([row('%4', 'working')])],
    ];
    const asked: { url: string; auth: string | null }[] = [];
    vi.stubGlobal('fetch', async (url: string, init: RequestInit) => {
      const auth = new Headers(init.headers).get('authorization');
      if (!url.startsWith('/v1/subscribe')) return new Response('{}', { status: 503 });
      asked.push({ url, auth });
      const lines = connections.shift();
      return lines ? sse(lines) : new Promise<Response>(() => {});
    });
    const docs: string[][] = [];
    const stop = startFeed('tok-1', {
      document: (d) => docs.push((d.agents as { pane: string; state: string }[]).map((a) => `${a.pane}:${a.state}`)),
      mode: () => {},
      unauthorized: () => {},
      clock: () => {},
    });
    await vi.waitFor(() => expect(docs.length).toBe(5), { timeout: 10_000, interval: 20 });
    stop();
    expect(docs).toEqual([['%1:working'], ['%2:blocked', '%1:working'], ['%2:blocked'], ['%3:idle'], ['%4:working', '%3:idle']]);
    expect(asked.length).toBeGreaterThanOrEqual(3);
    for (const a of asked) expect(a).toEqual({ url: '/v1/subscribe?mode=changes', auth: 'Bearer tok-1' });
  }, 15_000);
});
