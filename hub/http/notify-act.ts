// A notification's action link, answered: `POST /v1/notify/act/<token>` fires the one answer it
// names through the ordinary act path (the host's gate, lock and answered-once), `GET` fires
// nothing and says what a POST would do. The token is the whole credential (no client token):
// signed by the hub, bound to one prompt, single-use, expiring. Every refusal names its reason and
// sends nothing; every use is in the act audit and counted in /metrics.

import type { Context, Hono } from 'hono';
import type { ActResult } from '../../shared/protocol.js';
import { LINK_PATH, readToken, type LinkClaim } from '../notify/action-link.js';
import { NonceTakenError, type NonceStore } from '../notify/nonce-book.js';
import type { LINK_USES } from '../metrics.js';
import { forwardAct, type ActRouteDeps } from './act.js';
import { linkPage } from './notify-act-page.js';
import type { Gate } from './gate.js';

export interface NotifyActDeps extends Omit<ActRouteDeps, 'gate'> {
  key: () => Buffer;
  nonces: NonceStore;
  /** Checks the operator token a `device` sink's link needs beside it. */
  gate: Gate;
  /** Whether a sink's links fire alone (`link`) or only with a signed-in operator (`device`). */
  confirmOf: (sink: string) => 'link' | 'device';
}

type Use = (typeof LINK_USES)[number];
/** Outcomes where the answer reached the agent. */
const FIRED = new Set(['sent', 'replied', 'spawned', 'exited']);
type Verdict = { ok: true; claim: LinkClaim } | { ok: false; use: Use; status: 401 | 403 | 404 | 409 | 410; reason: string; claim: LinkClaim | null };

function judge(d: NotifyActDeps, token: string): Verdict {
  const claim = readToken(d.key(), token);
  if (!claim) return { ok: false, use: 'altered', status: 403, reason: 'this link is not one this hub signed (altered, cut short or foreign)', claim };
  const no = (use: Use, status: 403 | 404 | 409 | 410, reason: string): Verdict => ({ ok: false, use, status, reason, claim });
  if (d.nonces.used(claim.nonce)) return no('used', 409, 'this link was used already; each link answers once');
  if (d.clock() >= claim.expires_ms) return no('expired', 410, 'this link has expired');
  const allowed = d.store.actionsAllowed(claim.host);
  if (!allowed.includes(claim.action)) return no('not-allowed', 403, `host ${claim.host} does not let a hub fire "${claim.action}"`);
  const row = d.store.rows().find((r) => r.host === claim.host && r.server === claim.server && r.pane === claim.pane);
  if (!row) return no('changed', 404, `pane ${claim.pane} on ${claim.host} is gone`);
  if (row.state !== 'blocked' || row.episode_ms !== claim.episode_ms || (claim.prompt_id !== null && (row.prompt_id ?? null) !== claim.prompt_id)) {
    return no('changed', 409, 'the prompt this link answers is no longer the one on screen; nothing was sent');
  }
  return { ok: true, claim };
}

export function registerNotifyActRoute(app: Hono, d: NotifyActDeps): void {
  const audit = d.logger.child({ audit: 'remote-act' });
  const wantsHtml = (c: Context) => (c.req.header('accept') ?? '').includes('text/html');
  const refuse = (c: Context, v: Extract<Verdict, { ok: false }>, method: string) => {
    d.metrics.linkUsed(v.use);
    const cl = v.claim;
    audit.info(
      {
        who: cl ? `notify-link:${cl.sink}` : 'notify-link',
        method,
        host: cl?.host ?? null,
        pane: cl?.pane ?? null,
        action: cl?.action ?? null,
        refused: v.use,
      },
      'notify link refused',
    );
    const body = { schema: 1 as const, error: v.reason, refused: v.use };
    return wantsHtml(c) ? c.html(linkPage({ error: v.reason, claim: cl, token: null }), v.status) : c.json(body, v.status);
  };

  app.get(`${LINK_PATH}:token`, (c) => {
    const v = judge(d, c.req.param('token'));
    if (!v.ok) return refuse(c, v, 'GET');
    d.metrics.linkUsed('previewed');
    const cl = v.claim;
    audit.info({ who: `notify-link:${cl.sink}`, method: 'GET', host: cl.host, pane: cl.pane, action: cl.action }, 'notify link previewed');
    const body = {
      schema: 1 as const,
      would: { action: cl.action, host: cl.host, server: cl.server, pane: cl.pane, episode_ms: cl.episode_ms, prompt_id: cl.prompt_id },
      expires_ms: cl.expires_ms,
      fires: 'on POST to this address, once',
    };
    const device = d.confirmOf(cl.sink) === 'device';
    const json = device ? { ...body, fires: 'on POST to this address, once, with a signed-in operator token (Authorization: Bearer)' } : body;
    return wantsHtml(c) ? c.html(linkPage({ claim: cl, token: c.req.param('token'), needsDevice: device })) : c.json(json);
  });

  app.post(`${LINK_PATH}:token`, async (c) => {
    const v = judge(d, c.req.param('token'));
    if (!v.ok) return refuse(c, v, 'POST');
    const cl = v.claim;
    // A `device` sink: the link alone is not enough; checked before the nonce so a refusal burns nothing.
    let who = `notify-link:${cl.sink}`;
    if (d.confirmOf(cl.sink) === 'device') {
      const r = d.gate.client(c.req.header('authorization'), LINK_PATH.slice(0, -1));
      if (!r.ok || r.who.role !== 'operator') {
        const reason = 'this link needs a signed-in operator device to confirm it (its token as Authorization: Bearer); nothing was sent';
        return refuse(c, { ok: false, use: 'unconfirmed', status: r.ok ? 403 : 401, reason, claim: cl }, 'POST');
      }
      who = `notify-link:${cl.sink}:${r.who.name}`;
    }
    // The use is recorded before anything can be sent: of concurrent uses exactly one gets here.
    if (!d.nonces.claim(cl.nonce, cl.expires_ms))
      return refuse(c, { ok: false, use: 'used', status: 409, reason: 'this link was used already; each link answers once', claim: cl }, 'POST');
    try {
      await d.nonces.persisted(cl.nonce);
    } catch (e) {
      // A shared book: another hub recorded this nonce first, so this is the link's second use.
      if (e instanceof NonceTakenError)
        return refuse(c, { ok: false, use: 'used', status: 409, reason: 'this link was used already; each link answers once', claim: cl }, 'POST');
      d.logger.error({ err: (e as Error).message }, 'notify link: cannot record its use; nothing sent');
      return c.json({ schema: 1, error: 'the hub cannot record this use; nothing was sent' }, 503);
    }
    const out = await forwardAct(d, who, {
      host: cl.host,
      server: cl.server,
      pane: cl.pane,
      action: cl.action,
      expect_episode_ms: cl.episode_ms,
      ...(cl.prompt_id !== null ? { expect_prompt: cl.prompt_id } : {}),
      slot: `link-${cl.nonce}`,
    });
    const r = out.body as Partial<ActResult>;
    d.metrics.linkUsed(r.reason === 'undelivered' ? 'unreachable' : 'forwarded');
    const status = out.status !== 200 || FIRED.has(String(r.outcome)) ? out.status : r.outcome === 'timeout' ? 504 : 409;
    return wantsHtml(c) ? c.html(linkPage({ result: r, claim: cl, token: null }), status) : c.json(out.body, status);
  });
}
