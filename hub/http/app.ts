// The hub's HTTP routes on hono. Every route that needs a client token lists the gate's
// `requireClient` before its handler, which then reads the principal from the typed context: one
// check per request, and no handler names its own path. Streams (SSE and WebSocket) and the
// collectors' upgrade never reach this app: see subscribe.ts and collect.ts.

import { Hono } from 'hono';
import type { Logger } from 'pino';
import type { HubMetrics } from '../metrics.js';
import type { HubNotifier } from '../notify/hub-notifier.js';
import { registerLookingRoute, type LookingBook } from '../notify/looking.js';
import type { NonceStore } from '../notify/nonce-book.js';
import { registerNotificationsRoute } from '../notify/route.js';
import type { Selector } from '../../shared/selectors.js';
import type { FleetHosts, FleetReads, FleetWarming } from '../store/fleet-store.js';
import { mountWebPage } from '../web/assets.js';
import type { SshTarget } from '../config/config.js';
import { registerActRoute, type SlotBook } from './act.js';
import { registerEnrolRoutes, type EnrolDeps } from './enrol.js';
import { registerFleetVerbRoutes } from './fleet-verbs.js';
import { registerNotifyActRoute } from './notify-act.js';
import type { HostTarget } from '../link/host-target.js';
import { errorBody, type Gate } from './gate.js';
import { jsonPartsResponse } from './parts-response.js';
import { QueryError, selectorFromQuery } from './query.js';
import { whoami } from './whoami.js';

export interface HubAppDeps {
  gate: Gate;
  store: FleetReads & FleetHosts & Pick<FleetWarming, 'noteFullRead'>;
  metrics: HubMetrics;
  notifier: HubNotifier;
  logger: Logger;
  clock: () => number;
  /** Where a request (act, mute, preview) for `host` goes: its open session here, or the hub that holds it. */
  session: (host: string) => HostTarget | undefined;
  slots?: SlotBook;
  actTimeoutMs: number;
  /** Extra health (NATS): `ok` false answers 503. Absent: always ok. */
  health?: () => { ok: boolean } & Record<string, unknown>;
  /** The current `[[ssh]]` entries, for `tma jump` across hosts; none when not given. */
  sshTargets?: () => readonly SshTarget[];
  /** Notification action links: the signing key and the used-nonce book. */
  links: { key: () => Buffer; nonces: NonceStore };
  looking: LookingBook;
  /** One-line enrolment of new hosts (`tma hub add-host`); absent: no such routes. */
  enrol?: Omit<EnrolDeps, 'clock' | 'logger'>;
}

export function hubApp(d: HubAppDeps): Hono {
  const { gate, store } = d;
  const app = new Hono();

  app.get('/healthz', (c) => {
    if (!d.health) return c.json({ schema: 1, ok: true });
    const h = d.health();
    return c.json({ schema: 1, ...h }, h.ok ? 200 : 503);
  });
  mountWebPage(app);
  app.get('/v1/whoami', gate.requireClient, whoami);

  app.get('/v1/agents', gate.requireClient, (c) => {
    let sel: Selector;
    try {
      sel = selectorFromQuery(new URL(c.req.url).searchParams);
    } catch (e) {
      if (e instanceof QueryError) return c.json(errorBody(e.message), 400);
      throw e;
    }
    store.noteFullRead();
    return jsonPartsResponse(c, store.documentParts(sel));
  });

  registerActRoute(app, {
    gate,
    store,
    metrics: d.metrics,
    logger: d.logger,
    clock: d.clock,
    session: d.session,
    timeoutMs: d.actTimeoutMs,
    ...(d.slots ? { slots: d.slots } : {}),
  });
  registerFleetVerbRoutes(app, {
    gate,
    store,
    metrics: d.metrics,
    logger: d.logger,
    session: d.session,
    timeoutMs: d.actTimeoutMs,
    sshTargets: d.sshTargets ?? (() => []),
  });
  // No client token: the link is its own credential (signed, single-use, bound to one prompt).
  registerNotifyActRoute(app, {
    store,
    metrics: d.metrics,
    logger: d.logger,
    clock: d.clock,
    session: d.session,
    timeoutMs: d.actTimeoutMs,
    ...(d.slots ? { slots: d.slots } : {}),
    ...d.links,
    gate,
    confirmOf: (sink) => d.notifier.linkConfirm(sink),
  });
  registerLookingRoute(app, d.looking, gate.requireClient, () => store.rows());
  if (d.enrol) registerEnrolRoutes(app, { ...d.enrol, clock: d.clock, logger: d.logger });

  app.get('/metrics', gate.requireClient, (c) =>
    c.body(d.metrics.render(store, d.clock()) + d.notifier.metricsText(), 200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' }),
  );

  // An operator removes a host and its rows: one that is gone for good, or whose rows went wrong.
  app.delete('/v1/hosts/:name', gate.requireClient, (c) => {
    const { principal, endpoint } = c.var;
    if (principal.role !== 'operator') {
      d.metrics.authFailed(endpoint, 'wrong-kind');
      return c.json(errorBody('forgetting a host needs an operator token; this one may only read'), 403);
    }
    const host = c.req.param('name');
    if (!store.hostStatuses().some((h) => h.host === host)) return c.json(errorBody(`no host ${host}`), 404);
    if (d.session(host)?.isOpen) {
      return c.json(errorBody(`${host} is connected right now and would only come back; stop its collector (or remove its entry) first`), 409);
    }
    // A host another hub holds would only come back; the store says so too.
    if (!store.forget(host)) return c.json(errorBody(`${host} is connected right now and would only come back; stop its collector first`), 409);
    d.logger.info({ host, who: principal.name }, 'host forgotten');
    return c.json({ schema: 1, forgotten: host }, 200);
  });

  // The notifications route (hub/notify/) still takes a check of its own: the middleware has
  // already refused whoever it would, so that check has nothing left to refuse.
  app.get('/v1/notifications', gate.requireClient);
  registerNotificationsRoute(app, { notifier: d.notifier, clientAuth: () => null });

  app.get('/v1/subscribe', (c) => c.json(errorBody('open a WebSocket, or send Accept: text/event-stream'), 406));
  app.notFound((c) => c.json(errorBody('not found'), 404));
  app.onError((err, c) => {
    d.logger.error({ err: err.message }, 'request failed');
    return c.json(errorBody('internal error'), 500);
  });
  return app;
}
