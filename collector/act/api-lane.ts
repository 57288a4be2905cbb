// The OpenCode permission-reply lane: answer the request over the agent's own HTTP API instead
// of typing into its screen. One attempt, bounded, never retried and never turned into keys.

import type { ApiReply } from '../core/action-manifest.js';

export type ApiEnd = { kind: 'replied' } | { kind: 'gone' } | { kind: 'error'; message: string };

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

export async function replyPermission(endpoint: string, requestId: string, reply: ApiReply, timeoutMs: number): Promise<ApiEnd> {
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
  if (res.status >= 200 && res.status < 300) return { kind: 'replied' };
  if (res.status === 404) return { kind: 'gone' };
  return { kind: 'error', message: `API answered HTTP ${res.status}` };
}
