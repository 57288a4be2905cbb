// "Someone is looking at this row": the fleet page, while it is visible and focused on one row,
// says so every few seconds (POST /v1/looking, any client token). A hub sink then skips that
// pane's notification (`when_looking = "skip"`), as it does when the host saw its user typing.

import type { Hono, MiddlewareHandler } from 'hono';

/** A page's word holds this long; it repeats itself well within it. */
export const PAGE_LOOKING_MS = 20_000;

export class LookingBook {
  private readonly at = new Map<string, number>();
  constructor(private readonly clock: () => number = Date.now) {}

  mark(host: string, server: string | null, pane: string): void {
    if (this.at.size > 10_000) this.at.clear();
    this.at.set(JSON.stringify([host, server, pane]), this.clock());
  }

  /** A page that could not name the server (its rows do not carry one) looks at that pane on every server. */
  looking(host: string, server: string, pane: string): boolean {
    return this.fresh(JSON.stringify([host, server, pane])) || this.fresh(JSON.stringify([host, null, pane]));
  }

  private fresh(key: string): boolean {
    const t = this.at.get(key);
    const age = t === undefined ? Infinity : this.clock() - t;
    return age >= 0 && age < PAGE_LOOKING_MS;
  }
}

const str = (v: unknown, max: number): v is string => typeof v === 'string' && v.length > 0 && v.length <= max;

export function registerLookingRoute(app: Hono, book: LookingBook, requireClient: MiddlewareHandler): void {
  app.post('/v1/looking', requireClient, async (c) => {
    const b = (await c.req.json().catch(() => null)) as Record<string, unknown> | null;
    const server = b?.server ?? null;
    if (!b || !str(b.host, 253) || !(server === null || str(server, 4096)) || !str(b.pane, 16) || !/^%\d+$/.test(b.pane)) {
      return c.json({ schema: 1, error: 'body must be {"host", "server" (or null), "pane"} naming one row' }, 400);
    }
    book.mark(b.host, server, b.pane);
    return c.body(null, 204);
  });
}
