// GET /v1/notifications: the recent fleet notifications and how far each got with each sink, for
// any client token (viewer or operator). Nothing here carries a title or a secret.

import type { Context, Hono } from 'hono';
import type { HubNotifier } from './hub-notifier.js';

export const LIST_DEFAULT = 100;
export const LIST_MAX = 1000;

export function registerNotificationsRoute(app: Hono, o: { notifier: HubNotifier; clientAuth: (c: Context, endpoint: string) => Response | null }): void {
  app.get('/v1/notifications', (c) => {
    const refused = o.clientAuth(c, '/v1/notifications');
    if (refused) return refused;
    const raw = c.req.query('limit');
    let limit = LIST_DEFAULT;
    if (raw !== undefined) {
      if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > LIST_MAX) {
        return c.json({ schema: 1, error: `limit must be a whole number from 1 to ${LIST_MAX}` }, 400);
      }
      limit = Number(raw);
    }
    return c.json(o.notifier.list(limit));
  });
}
