// The protocol row as a receiver validates it. Apart from row.ts so that local one-shot commands,
// which only write rows, never load the validator.

import { z } from 'zod';
import { STATES } from './tokens.js';
import { PROTOCOL_ROW_KEYS } from './row.js';
import { QUOTA_BOUNDS, jsonBoundsProblem } from './bounded-json.js';
import { PROMPT_ID_RE, PROMPT_ID_RULE } from './prompt-id-rule.js';

// Every string a peer sends is bounded: a row is stored, copied to every reader and serialised
// on every request, so one oversized field costs the hub on each of those.
const TEXT_MAX = 1024;
const PATH_MAX = 4096;
const nullableString = z.string().max(TEXT_MAX).nullable();
const nullablePath = z.string().max(PATH_MAX).nullable();
const nullableNumber = z.number().nullable();
/** Free-form JSON (quota, additive keys): shallow, small, and therefore always serialisable. */
const boundedJson = z.unknown().superRefine((v, ctx) => {
  const problem = jsonBoundsProblem(v, QUOTA_BOUNDS);
  if (problem) ctx.addIssue({ code: 'custom', message: `value holds ${problem}` });
});
const KNOWN_KEYS = new Set<string>(PROTOCOL_ROW_KEYS);
const MAX_EXTRA_KEYS = 16;

/**
 * Schema of a protocol row as it arrives from another host. Unknown additive keys from a newer
 * collector pass through; a `title` never does.
 */
export const protocolRowSchema = z
  .looseObject({
    pane: z.string().regex(/^%\d+$/),
    agent: z.string().max(64),
    state: z.enum(STATES),
    detail: nullableString,
    since: z.number().int().nonnegative(),
    since_ms: z.number().int().nonnegative(),
    episode_ms: z.number().int().nonnegative(),
    locator: z.string().max(TEXT_MAX),
    attention: z.boolean(),
    done: z.boolean(),
    session: nullableString,
    transcript: nullablePath,
    permission_request: nullableString,
    stamped_at_ms: nullableNumber,
    context: nullableNumber,
    context_at_ms: nullableNumber,
    muted: z.boolean(),
    tokens: nullableNumber,
    quota: z.record(z.string(), z.unknown()).and(boundedJson).nullable(),
    cost_usd: nullableNumber,
    repo: nullableString,
    branch: nullableString,
    worktree: z.boolean().nullable(),
    pending_tool: nullableString,
    pending_call: nullablePath,
    pending_summary: nullablePath,
    server: z.string().max(PATH_MAX),
    host: z.string().max(253),
    // Absent from collectors older than the key; read as null.
    prompt_id: z.string().regex(PROMPT_ID_RE, PROMPT_ID_RULE).nullable().optional(),
  })
  .refine((row) => !('title' in row), { error: 'a protocol row must not carry a title' })
  .superRefine((row, ctx) => {
    // Additive keys from a newer collector still pass, within the same bounds as `quota`.
    const extra = Object.keys(row).filter((k) => !KNOWN_KEYS.has(k));
    if (extra.length > MAX_EXTRA_KEYS) ctx.addIssue({ code: 'custom', message: `more than ${MAX_EXTRA_KEYS} unknown keys` });
    for (const k of extra.slice(0, MAX_EXTRA_KEYS)) {
      const problem = k.length > 64 ? 'a key longer than 64 characters' : jsonBoundsProblem(row[k], QUOTA_BOUNDS);
      if (problem) ctx.addIssue({ code: 'custom', path: [k], message: `value holds ${problem}` });
    }
  });
