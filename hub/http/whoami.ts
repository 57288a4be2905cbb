// `GET /v1/whoami`: which client a token belongs to and its role. The web page asks so it can hide
// the action buttons a viewer would only get 403 for; the act route still decides on its own.

import type { Context } from 'hono';
import { authClient, type TokenBook } from './auth.js';
import type { Role } from '../config/config.js';

export interface WhoamiDocument {
  schema: 1;
  name: string;
  role: Role;
}

/**
 * The route handler. `refuse` is the hub's shared client check (it answers 401/403, counts and
 * logs the refusal); the principal is looked up here only once that check has passed.
 */
export function whoamiHandler(book: TokenBook, refuse: (c: Context, endpoint: string) => Response | null) {
  return (c: Context): Response => {
    const refused = refuse(c, '/v1/whoami');
    if (refused) return refused;
    const r = authClient(book, c.req.header('authorization'));
    if (!r.ok) return c.json({ schema: 1, error: 'unknown token' }, 401);
    const body: WhoamiDocument = { schema: 1, name: r.who.name, role: r.who.role };
    return c.json(body, 200, { 'cache-control': 'no-store' });
  };
}
