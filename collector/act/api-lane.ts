// The OpenCode permission-reply lane: answer the request over the agent's own HTTP API instead
// of typing into its screen. One attempt, bounded, never retried and never turned into keys.
//
// OpenCode answers 200 to a reply for an id it does not know (one its server lost in a restart),
// so a 200 proves nothing: the request must be in its pending list (`GET /permission`) before the
// reply, and gone from it after, for the answer to count as landed. Anything else is an error that
// says what was seen.

import type { ApiReply } from '../core/action-manifest.js';

export type ApiEnd = { kind: 'replied' } | { kind: 'gone' } | { kind: 'error'; message: string };

/** How often the pending list is read again while waiting for a reply to land. */
const LANDED_STEP_MS = 100;
/** How long after its 200 a reply may take to leave the pending list (OpenCode drops it at once). */
export const LANDED_WITHIN_MS = 2000;

export function pendingUrl(endpoint: string): string {
  return `${endpoint.replace(/\/+$/, '')}/permission`;
}

export function replyUrl(endpoint: string, requestId: string): string {
  return `${endpoint.replace(/\/+$/, '')}/permission/${encodeURIComponent(requestId)}/reply`;
}

function hostOf(endpoint: string): string {
  try {
    return new URL(endpoint).host;
  } catch {
    return endpoint;
  }
}

type Pending = { ok: true; ids: Set<string> } | { ok: false; seen: string };

/** The ids OpenCode lists as pending, or what was seen instead. */
async function pendingIds(endpoint: string, timeoutMs: number): Promise<Pending> {
  try {
    const res = await fetch(pendingUrl(endpoint), { redirect: 'error', signal: AbortSignal.timeout(timeoutMs) });
    const text = await res.text();
    if (res.status < 200 || res.status >= 300) return { ok: false, seen: `GET /permission answered HTTP ${res.status}` };
    const list = JSON.parse(text) as unknown;
    if (!Array.isArray(list)) return { ok: false, seen: 'GET /permission did not answer a list' };
    return { ok: true, ids: new Set(list.map((r) => (r as { id?: unknown } | null)?.id).filter((id): id is string => typeof id === 'string')) };
  } catch (e) {
    return { ok: false, seen: `GET /permission failed: ${(e as Error).message}` };
  }
}

export async function replyPermission(endpoint: string, requestId: string, reply: ApiReply, timeoutMs: number): Promise<ApiEnd> {
  const deadline = Date.now() + timeoutMs;
  const before = await pendingIds(endpoint, timeoutMs);
  // Nothing answered at all: the POST below says so with its hint.
  if (!before.ok && !before.seen.startsWith('GET /permission failed')) {
    return { kind: 'error', message: `cannot tell whether an answer would land (${before.seen}); nothing sent` };
  }
  if (before.ok && !before.ids.has(requestId)) {
    return {
      kind: 'error',
      message: `OpenCode does not list request ${requestId} as pending (${before.ids.size} pending; its server may have restarted and lost it); nothing sent`,
    };
  }
  let res: Response;
  try {
    res = await fetch(replyUrl(endpoint, requestId), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ reply }),
      redirect: 'error',
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (e) {
    // Nothing answered: most often an endpoint an older OpenCode plugin reported (the placeholder
    // a plainly started OpenCode hands plugins), which a current plugin replaces with its own.
    const cause = (e as { cause?: { code?: string } }).cause?.code;
    const hint = cause === 'ECONNREFUSED' ? `; nothing listens at ${hostOf(endpoint)} (tma install-hooks opencode, then restart OpenCode)` : '';
    return { kind: 'error', message: `API request failed: ${(e as Error).message}${hint}` };
  }
  // Drain so the socket is released promptly.
  await res.arrayBuffer().catch(() => undefined);
  if (res.status === 404) return { kind: 'gone' };
  if (res.status < 200 || res.status >= 300) return { kind: 'error', message: `API answered HTTP ${res.status}` };
  return landed(endpoint, requestId, res.status, Math.min(deadline, Date.now() + LANDED_WITHIN_MS));
}

/** After a 2xx: the answer landed once the request has left OpenCode's pending list. */
async function landed(endpoint: string, requestId: string, status: number, deadline: number): Promise<ApiEnd> {
  let seen = '';
  for (;;) {
    const now = await pendingIds(endpoint, Math.max(1, deadline - Date.now()));
    if (now.ok && !now.ids.has(requestId)) return { kind: 'replied' };
    seen = now.ok ? `request ${requestId} still pending` : now.seen;
    if (Date.now() + LANDED_STEP_MS > deadline) break;
    await new Promise((r) => setTimeout(r, LANDED_STEP_MS));
  }
  return { kind: 'error', message: `OpenCode answered HTTP ${status} but the answer did not land: ${seen}` };
}
