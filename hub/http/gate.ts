// The one place a request's credential is checked. Every refusal is counted in /metrics under the
// endpoint it was aimed at and logged only as a sample (strangers can send these at will). Routes
// on the hono app take the principal from the context the middleware filled; the stream and
// collector upgrades, which never reach hono, ask the same gate directly.

import type { Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import { routePath } from 'hono/route';
import type { Logger } from 'pino';
import type { HubMetrics } from '../metrics.js';
import { authClient, authCollector, type AuthOutcome, type Principal, type TokenBook } from './auth.js';
import { LogSampler } from './sampled-log.js';

export type ClientPrincipal = Extract<Principal, { kind: 'client' }>;
export type CollectorPrincipal = Extract<Principal, { kind: 'collector' }>;
export type Refusal = Exclude<AuthOutcome<unknown>, { ok: true }>;

/** What a route behind `requireClient` finds in its context. */
export interface ClientEnv {
  Variables: {
    principal: ClientPrincipal;
    /** The endpoint refusals are counted under (the route's path without its parameters). */
    endpoint: string;
  };
}

export const errorBody = (message: string) => ({ schema: 1 as const, error: message });

export function refusalMessage(r: Refusal): string {
  if (r.reason === 'missing') return 'missing bearer token';
  if (r.reason === 'unknown') return 'unknown token';
  if (r.reason === 'expired') return 'this token has expired';
  return 'this token is not valid for this endpoint';
}

/**
 * A route's path as a metrics label: `/v1/hosts/:name` counts as `/v1/hosts`, so what a caller
 * puts in the path never becomes a label of its own.
 */
export const endpointOf = (path: string): string => path.replace(/\/:[^/]+/g, '');

export class Gate {
  /** Refused credentials are counted every time, logged only as a sample. */
  private readonly sampler: LogSampler;

  constructor(
    private readonly o: {
      book: TokenBook;
      metrics: HubMetrics;
      logger: Logger;
      clock: () => number;
      /** Told the name of every client whose credential was accepted (last-seen, hub/http/clients-seen.ts). */
      onClient?: (name: string) => void;
    },
  ) {
    this.sampler = new LogSampler(10_000, o.clock);
  }

  logRefusal(endpoint: string, reason: string): void {
    const t = this.sampler.take(`${endpoint} ${reason}`);
    if (t.log) this.o.logger.warn({ endpoint, reason, ...(t.suppressed > 0 ? { suppressed_since_last: t.suppressed } : {}) }, 'request refused');
  }

  private refused(endpoint: string, r: Refusal): void {
    this.o.metrics.authFailed(endpoint, r.reason);
    this.logRefusal(endpoint, r.reason);
  }

  /** A client credential for `endpoint`; a refusal comes back already counted and logged. */
  client(header: string | null | undefined, endpoint: string): AuthOutcome<ClientPrincipal> {
    const r = authClient(this.o.book, header);
    if (!r.ok) this.refused(endpoint, r);
    else this.o.onClient?.(r.who.name);
    return r;
  }

  /** A collector credential for `endpoint`; a refusal comes back already counted and logged. */
  collector(header: string | null | undefined, endpoint: string): AuthOutcome<CollectorPrincipal> {
    const r = authCollector(this.o.book, header);
    if (!r.ok) this.refused(endpoint, r);
    return r;
  }

  /** Middleware for a route any client token may use: it answers 401/403 or sets the principal. */
  readonly requireClient = createMiddleware<ClientEnv>(async (c, next) => {
    const endpoint = endpointOf(routePath(c));
    const r = this.client(c.req.header('authorization'), endpoint);
    if (!r.ok) return refuse(c, r);
    c.set('principal', r.who);
    c.set('endpoint', endpoint);
    await next();
  });
}

function refuse(c: Context, r: Refusal): Response {
  if (r.status === 401) c.header('WWW-Authenticate', 'Bearer');
  return c.json(errorBody(refusalMessage(r)), r.status);
}
