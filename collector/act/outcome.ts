// What one fire of an action came to, and the process exit code each result stands for.
// The outcome set is closed and lives in shared/protocol.ts, beside the wire's act result.

import { ACT_OUTCOMES } from '../../shared/protocol.js';

export const OUTCOMES = ACT_OUTCOMES;
export type Outcome = (typeof OUTCOMES)[number];

/** Refusals decided by the gate or the binders; all exit 4. */
export const GATE_REASONS = ['wrong-agent', 'no-coverage', 'requires-unmet', 'gated', 'episode-changed', 'request-gone', 'prompt-changed', 'answered'] as const;
export type GateReason = (typeof GATE_REASONS)[number];

export type RefusalReason = GateReason | 'locked';
export type VanishReason = 'pane-gone' | 'request-gone';
/** Only ever read from the receipts ledger: the fire's effect could not be ruled out. */
export type ReplayReason = 'fired-unknown';
export type ActReason = RefusalReason | VanishReason | ReplayReason;

/** The §2.7 object. `cached` exists only when the caller gave a slot. */
export interface ActResult {
  schema: 1;
  action: string;
  pane: string;
  outcome: Outcome;
  exit_code: number;
  reason: ActReason | null;
  cached?: boolean;
}

export const EXIT_GATE = 4;
export const EXIT_LOCKED = 5;
export const EXIT_VANISHED = 3;
export const EXIT_TIMEOUT = 124;
export const EXIT_ERROR = 1;

/** The exit code an outcome stands for; `exited` carries its child's own code. */
export function exitCodeFor(outcome: Outcome, reason: ActReason | null, childCode = 0): number {
  switch (outcome) {
    case 'sent':
    case 'replied':
    case 'spawned':
      return 0;
    case 'exited':
      return childCode;
    case 'timeout':
      return EXIT_TIMEOUT;
    case 'refused':
      return reason === 'locked' ? EXIT_LOCKED : EXIT_GATE;
    case 'vanished':
      return EXIT_VANISHED;
    case 'error':
      return EXIT_ERROR;
  }
}

export function actResult(action: string, pane: string, outcome: Outcome, reason: ActReason | null = null, childCode = 0): ActResult {
  return { schema: 1, action, pane, outcome, exit_code: exitCodeFor(outcome, reason, childCode), reason };
}

/**
 * How bad a result is, for the exit code of a fan-out: acted < locked < gate refusal < vanished
 * < timeout < non-zero exit < error. A lock is the mildest failure because retrying later works.
 */
export function severity(r: Pick<ActResult, 'outcome' | 'reason' | 'exit_code'>): number {
  switch (r.outcome) {
    case 'sent':
    case 'replied':
    case 'spawned':
      return 0;
    case 'exited':
      return r.exit_code === 0 ? 0 : 5;
    case 'refused':
      return r.reason === 'locked' ? 1 : 2;
    case 'vanished':
      return 3;
    case 'timeout':
      return 4;
    case 'error':
      return 6;
  }
}

/** The process exit of a fan-out: the worst result's own code (0 when nothing ran). */
export function worstExit(results: readonly Pick<ActResult, 'outcome' | 'reason' | 'exit_code'>[]): number {
  let worst: Pick<ActResult, 'outcome' | 'reason' | 'exit_code'> | null = null;
  for (const r of results) if (worst === null || severity(r) > severity(worst)) worst = r;
  return worst === null ? 0 : worst.exit_code;
}

/** The exact key set on the wire; `cached` only when present. */
export function resultObject(r: ActResult): Record<string, unknown> {
  const o: Record<string, unknown> = { schema: 1, action: r.action, pane: r.pane, outcome: r.outcome, exit_code: r.exit_code, reason: r.reason };
  if (r.cached !== undefined) o.cached = r.cached;
  return o;
}

/** `--all`: the envelope, elements without their own schema. */
export function resultsEnvelope(results: readonly ActResult[]): { schema: 1; results: Record<string, unknown>[] } {
  return {
    schema: 1,
    results: results.map((r) => {
      const { schema: _schema, ...rest } = resultObject(r);
      return rest;
    }),
  };
}

/** The one-line human note for a result (stderr); null where the reference prints nothing. */
export function humanNote(r: ActResult): string | null {
  const head = `${r.action} ${r.pane}`;
  switch (r.outcome) {
    case 'sent':
      return `${head}: keys sent`;
    case 'replied':
      return `${head}: replied`;
    case 'refused':
      return `${head}: refused (${r.reason ?? 'unknown'})`;
    case 'vanished':
      return `${head}: vanished${r.reason ? ` (${r.reason})` : ''}`;
    case 'timeout':
      return `${head}: timed out`;
    case 'error':
      return `${head}: failed${r.reason ? ` (${r.reason})` : ''}`;
    case 'exited':
    case 'spawned':
      return null;
  }
}
