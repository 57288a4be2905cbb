// Prompt identity: a short opaque fingerprint of the prompt a blocked pane shows, so an answer can
// be bound to the prompt a person saw and a prompt is answered once. Pure. The id is a hash: the
// screen text it is derived from never leaves this module.

import { fnv1a64 } from './fnv.js';
import { matches } from './matchers.js';
import { regionText } from './regions.js';
import type { AgentManifest, Snapshot } from './types.js';

/**
 * What the winning blocked rule looked at (its region's text), or null when no blocked rule
 * matches this screen. The winner is picked the way the rule engine picks it: highest priority,
 * the first written on a tie.
 */
export function blockedRuleSaw(manifest: AgentManifest, snap: Snapshot): string | null {
  let best: { priority: number; text: string } | null = null;
  for (const rule of manifest.rules) {
    if (rule.state !== 'blocked' || rule.skipStateUpdate) continue;
    const text = regionText(rule.region, snap);
    if (!matches(rule.match, text)) continue;
    if (best === null || rule.priority > best.priority) best = { priority: rule.priority, text };
  }
  return best === null ? null : best.text;
}

export interface PromptParts {
  agent: string;
  /** What the blocked rule saw; null when the blocked claim came from a hook alone. */
  seen: string | null;
  /** The hook claim's instant, used when no rule saw the prompt. */
  evidenceAt: number;
  permissionRequest: string | null;
  pendingCall: string | null;
}

/**
 * 16 hex digits; the same parts always give the same id. Nothing about who looked or when goes
 * in (two processes judging one screen must agree), so the same dialog shown again later has the
 * same id: what separates them is the answered mark being cleared once the pane left `blocked`.
 */
export function promptId(p: PromptParts): string {
  const seen = p.seen === null ? `hook:${p.evidenceAt}` : `screen:${p.seen.replace(/\s+$/gm, '')}`;
  const text = [p.agent, seen, p.permissionRequest ?? '', p.pendingCall ?? ''].join('\u0000');
  return fnv1a64(text).toString(16).padStart(16, '0');
}

/**
 * The id of a prompt the agent itself named (`@agent_permission_request`, from its hook): that
 * name, not the screen, is the prompt's identity, so two requests are never one prompt and the
 * id is known the moment the hook lands, before any look at the screen. The episode start goes in
 * so a request id left over from another episode never names this one.
 */
export function requestPromptId(requestId: string, since: number): string {
  return fnv1a64(['request', requestId, String(since)].join('\u0000'))
    .toString(16)
    .padStart(16, '0');
}

/** The prompt_id a blocked pane shows, as every reader derives it from the pane's options. */
export function currentPromptId(options: Partial<Record<string, string>>, since: number): string | null {
  const request = options['@agent_permission_request'];
  if (request !== undefined && request !== '') return requestPromptId(request, since);
  return promptIdFromOption(options['@tma_prompt_id'], since);
}

// The pane option that carries the id between processes (`@tma_prompt_id`): `<since>:<id>`. The
// episode start is kept next to it so a value left over from an earlier episode is never read as
// the current prompt's.
export function formatPromptOption(since: number, id: string): string {
  return `${since}:${id}`;
}

/** The id the option holds for the episode starting at `since`, else null. */
export function promptIdFromOption(raw: string | undefined, since: number): string | null {
  if (raw === undefined) return null;
  const m = /^(\d+):([0-9a-f]{16})$/.exec(raw.trim());
  return m !== null && Number(m[1]) === since ? m[2]! : null;
}

// `@tma_answered`: which prompt a keys action answered, and when: `<id or ->:<ms>[:<nonce>]`,
// the nonce being the answering fire's lock nonce (for whoever reads the pane options).
export interface Answered {
  promptId: string | null;
  at: number;
  nonce?: string;
}

export function formatAnswered(a: Answered): string {
  return `${a.promptId ?? '-'}:${Math.trunc(a.at)}${a.nonce ? `:${a.nonce}` : ''}`;
}

export function parseAnswered(raw: string | undefined | null): Answered | null {
  if (raw === undefined || raw === null) return null;
  const m = /^([0-9a-f]{16}|-):(\d+)(?::([0-9a-f]{32}))?$/.exec(raw.trim());
  if (m === null) return null;
  return { promptId: m[1] === '-' ? null : m[1]!, at: Number(m[2]), ...(m[3] ? { nonce: m[3] } : {}) };
}
