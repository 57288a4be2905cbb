// The agent manifest as it stands in TOML, before regexes are compiled. Every object is strict:
// a misspelt key is far more likely than a deliberate extension, and silently ignoring it would
// leave a rule that never fires with nothing to say why.

import { z } from 'zod';
import { DETAIL_TOKEN, STATES, isState } from '../../shared/tokens.js';
import type { Region } from './types.js';

const DETAIL_HINT = 'must be a detail token of lowercase letters, digits, "_" or "-"';

export const detailTokenSchema = z.string().regex(DETAIL_TOKEN, { error: DETAIL_HINT });
export const stateSchema = z.enum(STATES);

const TAIL_LINES = /^tail_lines\((.*)\)$/s;

/**
 * `tail_lines(N)` (N ≥ 0, spaces around N allowed, as the reference reads it), `visible` or
 * `title`; anything else is an error. `tail_lines(0)` is an empty region: its rules never see text.
 */
export function parseRegion(text: string): Region | string {
  if (text === 'visible') return { kind: 'visible' };
  if (text === 'title') return { kind: 'title' };
  const m = TAIL_LINES.exec(text);
  if (m) {
    const count = (m[1] ?? '').trim();
    const n = Number(count);
    if (!/^[0-9]+$/.test(count) || !Number.isSafeInteger(n)) {
      return `tail_lines needs a whole line count, not ${JSON.stringify(count)}`;
    }
    return { kind: 'tail_lines', n };
  }
  return `unknown region ${JSON.stringify(text)} (tail_lines(N), visible or title)`;
}

const regionSchema = z.string().transform((text, ctx): Region => {
  const r = parseRegion(text);
  if (typeof r === 'string') {
    ctx.addIssue({ code: 'custom', message: r });
    return z.NEVER;
  }
  return r;
});

export const MATCH_KINDS = ['contains', 'regex', 'line_regex', 'any', 'all', 'not'] as const;

export interface RawMatch {
  contains?: string | undefined;
  regex?: string | undefined;
  line_regex?: string | undefined;
  any?: RawMatch[] | undefined;
  all?: RawMatch[] | undefined;
  not?: RawMatch | undefined;
}

// Externally tagged like the reference: the one key present names the matcher kind.
export const matchSchema: z.ZodType<RawMatch> = z.lazy(() =>
  z
    .strictObject({
      contains: z.string().optional(),
      regex: z.string().optional(),
      line_regex: z.string().optional(),
      any: z.array(matchSchema).optional(),
      all: z.array(matchSchema).optional(),
      not: matchSchema.optional(),
    })
    .superRefine((m, ctx) => {
      const present = MATCH_KINDS.filter((k) => m[k] !== undefined);
      if (present.length !== 1) {
        ctx.addIssue({
          code: 'custom',
          message:
            present.length === 0
              ? `empty match: needs one of ${MATCH_KINDS.join(', ')}`
              : `a match takes exactly one of ${MATCH_KINDS.join(', ')}, got ${present.join(' and ')}`,
        });
      }
    }),
);

export const claimSchema = z
  .strictObject({
    state: stateSchema.optional(),
    detail: detailTokenSchema.optional(),
    lifecycle: z.enum(['start', 'end']).optional(),
  })
  .superRefine((c, ctx) => {
    if (c.state !== undefined && c.lifecycle !== undefined) {
      ctx.addIssue({ code: 'custom', message: 'a claim is either {state, detail?} or {lifecycle}, not both' });
    } else if (c.state === undefined && c.lifecycle === undefined) {
      ctx.addIssue({ code: 'custom', message: 'empty claim: needs state or lifecycle' });
    } else if (c.lifecycle !== undefined && c.detail !== undefined) {
      ctx.addIssue({ code: 'custom', message: 'detail is not allowed on a lifecycle claim' });
    }
  });

const hookEntrySchema = z.strictObject({
  event: z.string().min(1),
  matcher: z.string().optional(),
  claim: claimSchema,
  turn_end: z.boolean().default(false),
});

const hooksSchema = z.strictObject({
  covers: z.array(z.enum([...STATES, 'lifecycle'])).default([]),
  map: z.array(hookEntrySchema).default([]),
});

// process_names is required, as in the reference: without it a manifest loads but can never
// claim a pane, and nothing would say why.
const identitySchema = z.strictObject({
  process_names: z.array(z.string().min(1), {
    error: (i) =>
      i.input === undefined
        ? 'missing required key: the process names the agent runs as, e.g. process_names = ["claude"] (without them it can never match a pane)'
        : 'must be a list of process names',
  }),
  title_patterns: z.array(z.string()).default([]),
});

const captureSchema = z.strictObject({
  visible: z.array(stateSchema).default([]),
});

export const ruleSchema = z.strictObject({
  state: stateSchema,
  detail: detailTokenSchema.optional(),
  priority: z.int().default(0),
  region: regionSchema,
  match: matchSchema,
  skip_state_update: z.boolean().default(false),
});

// A canonical detail spelled like a state would read as a state in every status format.
const detailKeySchema = detailTokenSchema.refine((k) => !isState(k), {
  error: 'a detail may not be named like a state token',
});

const detailsSchema = z.record(detailKeySchema, z.strictObject({ aliases: z.array(detailTokenSchema).default([]) }));

const telemetrySchema = z.strictObject({
  context: z
    .strictObject({
      channel: z.enum(['event', 'file-tail', 'screen'], {
        error: (i) => `unknown telemetry channel ${JSON.stringify(i.input)} (event, file-tail, screen)`,
      }),
      format: z.string(),
    })
    .optional(),
});

// How to read what a blocked screen asks: a regex over one region; the capture groups that took
// part (else the whole match) joined by ": " are the prompt's one-line summary.
const promptSchema = z.strictObject({
  region: regionSchema,
  summary: z.string().min(1),
});

export const agentManifestSchema = z.strictObject({
  min_engine_version: z.string(),
  identity: identitySchema,
  hooks: hooksSchema.optional(),
  capture: captureSchema,
  rules: z.array(ruleSchema).default([]),
  details: detailsSchema.default({}),
  telemetry: telemetrySchema.optional(),
  prompt: promptSchema.optional(),
});

export type RawAgentManifest = z.output<typeof agentManifestSchema>;
export type RawRule = z.output<typeof ruleSchema>;
export type RawClaim = z.output<typeof claimSchema>;

// ---------------------------------------------------------------------------------------------
// Turning a zod failure into "which key, what is wrong"

/** `rules[2].match.regex` style; odd keys are quoted so the path stays readable. */
export function keyPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const p of path) {
    if (typeof p === 'number') out += `[${p}]`;
    else {
      const s = String(p);
      out += /^[A-Za-z0-9_-]+$/.test(s) ? (out === '' ? s : `.${s}`) : `[${JSON.stringify(s)}]`;
    }
  }
  return out;
}

/**
 * One issue of a failed parse, as a key path and a sentence. An unknown key is reported first:
 * a misspelt required key also shows up as "missing", and the typo is the useful half.
 */
export function describeIssue(error: z.ZodError): { key: string; problem: string } {
  const issue = error.issues.find((i) => i.code === 'unrecognized_keys') ?? error.issues[0];
  if (issue === undefined) return { key: '', problem: 'invalid manifest' };
  const path = [...issue.path];
  if (issue.code === 'unrecognized_keys') {
    const extra = issue.keys[0] ?? '';
    return { key: keyPath([...path, extra]), problem: 'unknown key' };
  }
  if (issue.code === 'invalid_type' && /received undefined/.test(issue.message)) {
    return { key: keyPath(path), problem: 'missing required key' };
  }
  if (issue.code === 'invalid_key') {
    const inner = issue.issues[0];
    return { key: keyPath(path), problem: inner?.message ?? issue.message };
  }
  return { key: keyPath(path), problem: issue.message };
}
