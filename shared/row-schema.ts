// The protocol row as a receiver validates it. Apart from row.ts so that local one-shot commands,
// which only write rows, never load the validator.

import { z } from 'zod';
import { STATES } from './tokens.js';

const nullableString = z.string().nullable();
const nullableNumber = z.number().nullable();

/**
 * Schema of a protocol row as it arrives from another host. Unknown additive keys from a newer
 * collector pass through; a `title` never does.
 */
export const protocolRowSchema = z
  .looseObject({
    pane: z.string().regex(/^%\d+$/),
    agent: z.string(),
    state: z.enum(STATES),
    detail: nullableString,
    since: z.number().int().nonnegative(),
    since_ms: z.number().int().nonnegative(),
    episode_ms: z.number().int().nonnegative(),
    locator: z.string(),
    attention: z.boolean(),
    done: z.boolean(),
    session: nullableString,
    transcript: nullableString,
    permission_request: nullableString,
    stamped_at_ms: nullableNumber,
    context: nullableNumber,
    context_at_ms: nullableNumber,
    muted: z.boolean(),
    tokens: nullableNumber,
    quota: z.record(z.string(), z.unknown()).nullable(),
    cost_usd: nullableNumber,
    repo: nullableString,
    branch: nullableString,
    worktree: z.boolean().nullable(),
    pending_tool: nullableString,
    pending_call: nullableString,
    pending_summary: nullableString,
    server: z.string(),
    host: z.string(),
    // Absent from collectors older than the key; read as null.
    prompt_id: z.string().max(64).nullable().optional(),
  })
  .refine((row) => !('title' in row), { message: 'a protocol row must not carry a title' });
