// POST /v1/act: an operator fires an action on a pane of another host. The hub only routes: the
// host's collector runs its own broker (gate, lock, re-check, binders, receipts), so nothing about
// the pane is decided here except where it lives and whether the host could be reached.
//
// The hub never retries a request on its own. One request is one frame; if its answer is lost, the
// caller asks again with the same slot and the host replays what it recorded. That is what keeps a
// flaky link, a reconnect or a hub restart from firing twice.

import { randomBytes } from 'node:crypto';
import type { Hono } from 'hono';
import type { Logger } from 'pino';
import type { ActResult } from '../../shared/protocol.js';
import { actBodySchema, hubResult, HUB_REASONS, planAct, routedResult, type ActBody } from './act-plan.js';
import { errorBody, type Gate } from './gate.js';
import { UndeliveredError, type HostTarget } from '../link/host-target.js';
import { ActTimeoutError, LinkClosedError } from '../link/session.js';
import type { HubMetrics } from '../metrics.js';
import type { FleetReads } from '../store/fleet-store.js';
import { BodyTooLarge, readBodyLimited } from './request-limits.js';

export const DEFAULT_ACT_TIMEOUT_MS = 10_000;

/**
 * Slots shared by several hubs: the first request of a slot goes to the host, a later one (on
 * any hub) gets the result it got. `begin` waits a while for a result still being fetched.
 */
export interface SlotBook {
  begin(host: string, slot: string, waitMs: number): Promise<{ kind: 'first' } | { kind: 'result'; result: ActResult }>;
  /** The host's answer, recorded; null lets the slot go (nothing was delivered, or nothing is known). */
  finish(host: string, slot: string, result: ActResult | null): Promise<void>;
}
/** An act body is a handful of short fields; anything this large is not one. */
const MAX_BODY_BYTES = 16 * 1024;

export interface ActRouteDeps {
  gate: Gate;
  store: FleetReads;
  metrics: HubMetrics;
  logger: Logger;
  clock: () => number;
  /** Where an act for `host` goes: its open session here, or the hub that holds it. */
  session: (host: string) => HostTarget | undefined;
  /** Present when several hubs share slots (NATS). */
  slots?: SlotBook;
  /** How long the hub waits for the host's answer before reporting `fired-unknown`. */
  timeoutMs: number;
}

export function registerActRoute(app: Hono, d: ActRouteDeps): void {
  app.post('/v1/act', d.gate.requireClient, async (c) => {
    const { principal, endpoint } = c.var;
    if (principal.role !== 'operator') {
      d.metrics.authFailed(endpoint, 'wrong-kind');
      d.logger.warn({ endpoint, who: principal.name }, 'act refused: viewer token');
      return c.json(errorBody('acting needs an operator token; this one may only read'), 403);
    }

    let text: string;
    try {
      text = await readBodyLimited(c.req.raw, MAX_BODY_BYTES);
    } catch (e) {
      if (e instanceof BodyTooLarge) return c.json(errorBody(e.message), 413, { connection: 'close' });
      throw e;
    }
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch {
      return c.json(errorBody('body is not JSON'), 400);
    }
    const parsed = actBodySchema.safeParse(raw);
    if (!parsed.success) {
      const i = parsed.error.issues[0]!;
      return c.json(errorBody(`${i.path.join('.') || '(body)'}: ${i.message}`), 400);
    }
    const b = parsed.data;
    const who = principal.name;

    const out = await forwardAct(d, who, b);
    return c.json(out.body, out.status);
  });
}

/**
 * Plan, route and audit one act: what `POST /v1/act` does after its token and body checks, and
 * what a notification's action link does after its own. The answer is the HTTP status and body.
 */
export async function forwardAct(d: Omit<ActRouteDeps, 'gate'>, who: string, b: ActBody): Promise<{ status: 200 | 404 | 409; body: object }> {
  const audit = d.logger.child({ audit: 'remote-act' });
  const record = (slot: string | null, r: ActResult) => {
    d.metrics.actDone(r.outcome);
    audit.info(
      {
        who,
        host: b.host,
        server: r.server,
        pane: b.pane,
        action: b.action,
        expect_episode_ms: b.expect_episode_ms ?? null,
        expect_permission_request: b.expect_permission_request ?? null,
        expect_prompt: b.expect_prompt ?? null,
        slot,
        outcome: r.outcome,
        reason: r.reason,
        exit_code: r.exit_code,
        cached: r.cached ?? null,
      },
      'remote act',
    );
  };
  const session = d.session(b.host);
  const status = d.store.hostStatuses().find((h) => h.host === b.host);
  const plan = planAct(b, {
    known: status !== undefined,
    rows: d.store.rows().filter((r) => r.host === b.host),
    // Only a hello sets the collector version: without one the host has announced nothing.
    actionsAllowed: status?.collector_version != null ? d.store.actionsAllowed(b.host) : null,
    linkOpen: session?.isOpen === true,
  });
  if (plan.kind === 'http') {
    audit.info({ who, host: b.host, server: b.server ?? null, pane: b.pane, action: b.action, status: plan.status }, 'remote act not routed');
    return { status: plan.status, body: plan.body };
  }
  if (plan.kind === 'result') {
    record(b.slot ?? null, plan.result);
    return { status: 200, body: plan.result };
  }

  const server = plan.server;
  const slot = b.slot ?? `hub-${randomBytes(12).toString('hex')}`;
  if (b.slot !== undefined && d.slots) {
    const seen = await d.slots.begin(b.host, b.slot, d.timeoutMs);
    if (seen.kind === 'result') {
      record(slot, seen.result);
      return { status: 200, body: seen.result };
    }
  }
  let result: ActResult;
  let known = true;
  try {
    const answer = await session!.request(
      {
        type: 'act',
        id: randomBytes(12).toString('hex'),
        action: b.action,
        server,
        pane: b.pane,
        expect_episode_ms: b.expect_episode_ms ?? null,
        expect_permission_request: b.expect_permission_request ?? null,
        // Only when given: a collector older than the key would refuse the frame otherwise.
        ...(b.expect_prompt != null ? { expect_prompt: b.expect_prompt } : {}),
        slot,
        principal: who,
        deadline_ms: d.clock() + d.timeoutMs,
      },
      d.timeoutMs,
    );
    result = routedResult(answer, b.host, server);
  } catch (e) {
    // The frame was handed to an open link before either of these can happen, so the host may
    // have acted: only the slot can tell, later.
    known = false;
    if (e instanceof ActTimeoutError || e instanceof LinkClosedError) result = hubResult(b, server, 'timeout', HUB_REASONS.firedUnknown);
    else if (e instanceof UndeliveredError) result = hubResult(b, server, 'timeout', HUB_REASONS.undelivered);
    else throw e;
  }
  if (b.slot !== undefined && d.slots) await d.slots.finish(b.host, b.slot, known ? result : null);
  record(slot, result);
  // A slot the hub made up is handed back (an added key), so a caller who got fired-unknown can
  // ask again with it and learn what actually happened.
  return { status: 200, body: b.slot === undefined ? { ...result, slot } : result };
}
