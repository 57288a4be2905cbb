// `GET /v1/whoami`: which client a token belongs to and its role. The web page asks so it can hide
// the action buttons a viewer would only get 403 for; the act route still decides on its own.

import type { Context } from 'hono';
import type { Role } from '../config/config.js';
import type { ClientEnv } from './gate.js';

export interface WhoamiDocument {
  schema: 1;
  name: string;
  role: Role;
}

/** The route handler, behind the gate's `requireClient`: the principal is the one it checked. */
export function whoami(c: Context<ClientEnv>): Response {
  const { name, role } = c.var.principal;
  const body: WhoamiDocument = { schema: 1, name, role };
  return c.json(body, 200, { 'cache-control': 'no-store' });
}
