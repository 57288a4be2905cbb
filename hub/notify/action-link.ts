// Notification action links: each is a capability of its own. The token names one answer to one
// prompt (host, server, pane, episode, prompt_id, action), an expiry and a nonce, and is signed
// (HMAC-SHA256) with the hub's key, so it carries no client token and cannot be bent to another
// pane or prompt. Whether it was used already is the nonce book's to say (nonce-book.ts).

import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { PROMPT_ID_RE } from '../../shared/prompt-id-rule.js';

export const LINK_PATH = '/v1/notify/act/';

export interface LinkClaim {
  host: string;
  server: string;
  pane: string;
  episode_ms: number;
  prompt_id: string | null;
  action: string;
  /** The sink it went to (for the audit). */
  sink: string;
  expires_ms: number;
  nonce: string;
}

export interface ActionLink {
  label: string;
  action: string;
  url: string;
}

const b64 = (b: Buffer | string) => Buffer.from(b).toString('base64url');
const sign = (key: Buffer, body: string) => createHmac('sha256', key).update(`tma-act-link/1.${body}`).digest();

/** The token for `c`: its fields (compact JSON) and their signature, both base64url. */
export function mintToken(key: Buffer, c: Omit<LinkClaim, 'nonce'> & { nonce?: string }): string {
  const nonce = c.nonce ?? randomBytes(16).toString('hex');
  const body = b64(JSON.stringify([1, c.host, c.server, c.pane, c.episode_ms, c.prompt_id, c.action, c.sink, c.expires_ms, nonce]));
  return `${body}.${b64(sign(key, body))}`;
}

/** The claim a token makes, or null when it is not one this key signed (altered, truncated, foreign). */
export function readToken(key: Buffer, token: string): LinkClaim | null {
  const m = /^([A-Za-z0-9_-]{1,8000})\.([A-Za-z0-9_-]{43})$/.exec(token);
  if (!m) return null;
  // The signature's text is compared, not its decoded bytes: base64url's last character carries
  // two unused bits, so four spellings decode alike, and a link changed in one of them is altered.
  const want = Buffer.from(b64(sign(key, m[1]!)));
  const got = Buffer.from(m[2]!);
  if (got.length !== want.length || !timingSafeEqual(got, want)) return null;
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(m[1]!, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  if (!Array.isArray(v) || v.length !== 10 || v[0] !== 1) return null;
  const [, host, server, pane, episode, prompt, action, sink, expires, nonce] = v as unknown[];
  const str = (x: unknown): x is string => typeof x === 'string' && x.length > 0;
  if (!str(host) || !str(server) || !str(pane) || !str(action) || !str(sink) || !str(nonce)) return null;
  if (!Number.isInteger(episode) || !Number.isInteger(expires)) return null;
  if (prompt !== null && !(typeof prompt === 'string' && PROMPT_ID_RE.test(prompt))) return null;
  return { host, server, pane, episode_ms: episode as number, prompt_id: prompt, action, sink, expires_ms: expires as number, nonce };
}

/** "approve" → "Approve": the button's words. */
export const actionLabel = (a: string): string => a.charAt(0).toUpperCase() + a.slice(1).replace(/[-_]/g, ' ');

export interface LinkMinterDeps {
  key: () => Buffer;
  clock: () => number;
  /** The pane as the store has it now (its prompt_id is what the link binds). */
  pane(host: string, server: string, pane: string): { state: string; episode_ms: number; prompt_id: string | null } | null;
  /** What the host lets a hub fire; null when it never said. */
  allowed(host: string): readonly string[] | null;
}

/**
 * The links one blocked event offers a sink: its configured actions that the host allows remotely,
 * each bound to the prompt the store shows now. None when the pane is no longer on that episode.
 */
export function mintLinks(
  d: LinkMinterDeps,
  base: string,
  sink: { name: string; actions?: string[]; actionTtlMs?: number },
  e: { trigger: string; host: string; server: string; pane: string; episode_ms: number },
): ActionLink[] {
  if (e.trigger !== 'blocked' || !sink.actions?.length) return [];
  const row = d.pane(e.host, e.server, e.pane);
  if (!row || row.state !== 'blocked' || row.episode_ms !== e.episode_ms) return [];
  const allowed = d.allowed(e.host) ?? [];
  const expires = d.clock() + (sink.actionTtlMs ?? 15 * 60_000);
  return sink.actions
    .filter((a) => allowed.includes(a))
    .map((action) => {
      const token = mintToken(d.key(), { ...e, prompt_id: row.prompt_id, action, sink: sink.name, expires_ms: expires });
      return { label: actionLabel(action), action, url: `${base.replace(/\/+$/, '')}${LINK_PATH}${token}` };
    });
}
