// The fleet verbs besides act: POST /v1/mute (an operator silences a pane's notifications on its
// host), POST /v1/preview (any client asks a host what an action would do on a pane, nothing sent:
// `act --dry-run` and `act --list --pane` over a hub) and GET /v1/hosts/:name/ssh (where `tma jump`
// can reach a host over ssh, from the hub's `[[ssh]]` entry: user, host and port, never a key).
//
// Like /v1/act, the hub only routes: the host re-reads the pane and applies its own policy. On
// NATS a host linked to another hub is reached through that hub, exactly as an act is; who may
// ask is checked here, on the hub that was asked.

import { randomBytes } from 'node:crypto';
import type { Context, Hono } from 'hono';
import type { Logger } from 'pino';
import { z } from 'zod';
import { PROMPT_ID_RE, PROMPT_ID_RULE } from '../../shared/prompt-id-rule.js';
import type { MuteResult } from '../../shared/protocol.js';
import type { SshTarget } from '../config/config.js';
import { UndeliveredError, type HostTarget } from '../link/host-target.js';
import { ActTimeoutError, LinkClosedError } from '../link/session.js';
import type { HubMetrics } from '../metrics.js';
import type { FleetReads } from '../store/fleet-store.js';
import { placePane } from './act-plan.js';
import { errorBody, type Gate } from './gate.js';
import { BodyTooLarge, readBodyLimited } from './request-limits.js';

const MAX_BODY_BYTES = 16 * 1024;

const host = z
  .string()
  .min(1)
  .max(253)
  .regex(/^[A-Za-z0-9._-]+$/, 'host names use letters, digits, dot, dash, underscore');
const where = {
  host,
  server: z.string().min(1).max(4096).optional(),
  pane: z.string().regex(/^%\d+$/, 'a pane id looks like %12'),
};
const actionName = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[a-z0-9_-]+$/, 'action names use a-z, 0-9, dash, underscore');

export const muteBodySchema = z.strictObject({ ...where, for_ms: z.number().int().positive().nullable().optional(), clear: z.boolean().optional() });
export const previewBodySchema = z.strictObject({
  ...where,
  /** The actions to judge; absent = every action the host lets a hub fire. */
  actions: z.array(actionName).min(1).max(64).optional(),
  expect_episode_ms: z.number().int().nonnegative().nullable().optional(),
  expect_permission_request: z.string().min(1).max(256).nullable().optional(),
  expect_prompt: z.string().regex(PROMPT_ID_RE, PROMPT_ID_RULE).nullable().optional(),
});

export interface FleetVerbDeps {
  gate: Gate;
  store: FleetReads;
  metrics: HubMetrics;
  logger: Logger;
  /** The host's open session here, or (on NATS) the hub that holds its link. */
  session: (host: string) => HostTarget | undefined;
  timeoutMs: number;
  /** The hub's current `[[ssh]]` entries (a reload changes them). */
  sshTargets: () => readonly SshTarget[];
}

async function bodyOf<T>(c: Context, schema: z.ZodType<T>): Promise<{ ok: true; body: T } | { ok: false; res: Response }> {
  let text: string;
  try {
    text = await readBodyLimited(c.req.raw, MAX_BODY_BYTES);
  } catch (e) {
    if (e instanceof BodyTooLarge) return { ok: false, res: c.json(errorBody(e.message), 413, { connection: 'close' }) };
    throw e;
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return { ok: false, res: c.json(errorBody('body is not JSON'), 400) };
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const i = parsed.error.issues[0]!;
    return { ok: false, res: c.json(errorBody(`${i.path.join('.') || '(body)'}: ${i.message}`), 400) };
  }
  return { ok: true, body: parsed.data };
}

export function registerFleetVerbRoutes(app: Hono, d: FleetVerbDeps): void {
  const audit = d.logger.child({ audit: 'remote-verb' });
  const place = (b: { host: string; server?: string; pane: string }) => {
    const known = d.store.hostStatuses().some((h) => h.host === b.host);
    return placePane(b, { known, rows: d.store.rows().filter((r) => r.host === b.host) });
  };
  const newId = () => randomBytes(12).toString('hex');

  app.post('/v1/mute', d.gate.requireClient, async (c) => {
    const { principal, endpoint } = c.var;
    if (principal.role !== 'operator') {
      d.metrics.authFailed(endpoint, 'wrong-kind');
      return c.json(errorBody('muting needs an operator token; this one may only read'), 403);
    }
    const got = await bodyOf(c, muteBodySchema);
    if (!got.ok) return got.res;
    const b = got.body;
    if (b.clear === true && b.for_ms != null) return c.json(errorBody('for_ms cannot be combined with clear'), 400);
    const placed = place(b);
    if (placed.kind === 'http') return c.json(placed.body, placed.status);
    const server = placed.server;
    const result = (outcome: string, exit_code: number, reason: string): MuteResult => ({
      schema: 1,
      pane: b.pane,
      outcome,
      exit_code,
      reason,
      until_ms: null,
      host: b.host,
      server,
    });
    const session = d.session(b.host);
    const verbs = d.store.remoteVerbs(b.host);
    let r: MuteResult;
    // A collector that previews but does not mute was told not to by its host; one that does
    // neither predates remote mutes.
    if (session?.isOpen !== true) r = result('timeout', 124, 'undelivered');
    else if (!verbs.includes('mute')) r = result('refused', 4, verbs.includes('preview') ? 'not-allowed' : 'not-supported');
    else {
      try {
        const answer = await session.request(
          { type: 'mute', id: newId(), server, pane: b.pane, for_ms: b.for_ms ?? null, clear: b.clear === true, principal: principal.name },
          d.timeoutMs,
        );
        // Where it ran is the hub's to say, as for act.
        r = { ...answer, host: b.host, server };
      } catch (e) {
        // A mute is safe to repeat: asking again settles it.
        if (e instanceof ActTimeoutError || e instanceof LinkClosedError) r = result('timeout', 124, 'unanswered');
        else if (e instanceof UndeliveredError) r = result('timeout', 124, 'undelivered');
        else throw e;
      }
    }
    audit.info(
      { who: principal.name, verb: 'mute', host: b.host, server, pane: b.pane, for_ms: b.for_ms ?? null, clear: b.clear === true, outcome: r.outcome },
      'remote mute',
    );
    return c.json(r, 200);
  });

  app.post('/v1/preview', d.gate.requireClient, async (c) => {
    const got = await bodyOf(c, previewBodySchema);
    if (!got.ok) return got.res;
    const b = got.body;
    const placed = place(b);
    if (placed.kind === 'http') return c.json(placed.body, placed.status);
    const session = d.session(b.host);
    if (session?.isOpen !== true) return c.json(errorBody(`host ${b.host} is not connected: nothing can be checked there`), 503);
    if (!d.store.remoteVerbs(b.host).includes('preview')) return c.json(errorBody(`the collector on ${b.host} is too old to preview actions`), 501);
    const actions = b.actions ?? [...d.store.actionsAllowed(b.host)];
    if (actions.length === 0) return c.json(errorBody(`host ${b.host} lets a hub fire no action`), 409);
    try {
      const answer = await session.request(
        {
          type: 'preview',
          id: newId(),
          server: placed.server,
          pane: b.pane,
          actions,
          expect_episode_ms: b.expect_episode_ms ?? null,
          expect_permission_request: b.expect_permission_request ?? null,
          expect_prompt: b.expect_prompt ?? null,
          principal: c.var.principal.name,
        },
        d.timeoutMs,
      );
      return c.json({ ...answer, host: b.host, server: placed.server }, 200);
    } catch (e) {
      if (e instanceof ActTimeoutError || e instanceof LinkClosedError) return c.json(errorBody(`host ${b.host} did not answer in time`), 504);
      if (e instanceof UndeliveredError) return c.json(errorBody(`host ${b.host} is not connected: ${e.message}`), 503);
      throw e;
    }
  });

  app.get('/v1/hosts/:name/ssh', d.gate.requireClient, (c) => {
    const name = c.req.param('name');
    const t = d.sshTargets().find((s) => s.name === name);
    // The identity and known_hosts files are the hub's own: a client brings its own key.
    return c.json({ schema: 1, host: name, ssh: t ? { user: t.user, host: t.host, port: t.port } : null }, 200);
  });
}
