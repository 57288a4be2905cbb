// "Someone is looking at this row": the fleet page, while it is visible and focused on one row,
// says so every few seconds (POST /v1/looking). A hub sink then skips that pane's notification
// (`when_looking = "skip"`), as it does when the host saw its user typing.
//
// A claim silences someone's phone, so it is held to what one person at one page can mean: only an
// operator's token counts (a viewer cannot answer the prompt, so its look must not hold back the
// push that lets an operator answer it); a claim names one row the hub has now (a `server: null`
// claim must resolve to exactly one row, never "that pane on every server"); each client holds one
// claim at a time (the newest replaces its last, so one token cannot blanket the fleet); and a claim
// lapses after PAGE_LOOKING_MS unless the page repeats it.

import type { Hono, MiddlewareHandler } from 'hono';
import type { ClientEnv } from '../http/gate.js';

/** A page's word holds this long; it repeats itself well within it (every 8 s). */
export const PAGE_LOOKING_MS = 20_000;

interface Claim {
  host: string;
  server: string;
  pane: string;
  at: number;
}

export class LookingBook {
  /** By client name: one claim each, so the book is as large as the hub's client list. */
  private readonly by = new Map<string, Claim>();
  constructor(private readonly clock: () => number = Date.now) {}

  mark(client: string, host: string, server: string, pane: string): void {
    this.by.set(client, { host, server, pane, at: this.clock() });
  }

  /** Whether any client's fresh claim names this row. */
  looking(host: string, server: string, pane: string): boolean {
    const now = this.clock();
    for (const c of this.by.values()) {
      const age = now - c.at;
      if (c.host === host && c.server === server && c.pane === pane && age >= 0 && age < PAGE_LOOKING_MS) return true;
    }
    return false;
  }
}

const str = (v: unknown, max: number): v is string => typeof v === 'string' && v.length > 0 && v.length <= max;

type RowKey = { host: string; server: string; pane: string };

export function registerLookingRoute(app: Hono, book: LookingBook, requireClient: MiddlewareHandler<ClientEnv>, rows: () => readonly RowKey[]): void {
  app.post('/v1/looking', requireClient, async (c) => {
    const principal = c.var.principal;
    if (principal.role !== 'operator') {
      return c.json({ schema: 1, error: "a viewer's look does not hold back notifications; only an operator token's does" }, 403);
    }
    const b = (await c.req.json().catch(() => null)) as Record<string, unknown> | null;
    const server = b?.server ?? null;
    if (!b || !str(b.host, 253) || !(server === null || str(server, 4096)) || !str(b.pane, 16) || !/^%\d+$/.test(b.pane)) {
      return c.json({ schema: 1, error: 'body must be {"host", "server" (or null), "pane"} naming one row' }, 400);
    }
    const host = b.host;
    const pane = b.pane;
    const hits = rows().filter((r) => r.host === host && r.pane === pane && (server === null || r.server === server));
    if (hits.length === 0) return c.json({ schema: 1, error: `no row ${pane} on ${host}${server === null ? '' : ` (server ${server})`}` }, 404);
    if (hits.length > 1) return c.json({ schema: 1, error: `${pane} on ${host} is on ${hits.length} servers; name the server` }, 409);
    book.mark(principal.name, host, hits[0]!.server, pane);
    return c.body(null, 204);
  });
}
