// What the hub decides about a remote act before anything leaves it. Pure: the route hands in
// what the store and the link table say, and gets back either an HTTP refusal, a result the hub
// can give on its own (nothing was sent, so nothing can have fired), or the server to forward to.
//
// Refusals are reported most-permanent first, like the host's gate: a host the hub never heard
// of, then a pane it cannot place, then an action the host does not allow, and only then a link
// that happens to be down right now.

import { z } from 'zod';
import type { FleetRow } from '../../shared/fleet.js';
import type { ActResult } from '../../shared/protocol.js';
import { PROMPT_ID_RE, PROMPT_ID_RULE } from '../../shared/prompt-id-rule.js';

/** Exit codes of the hub-decided results, as the local act table assigns them (surfaces §0.1). */
export const EXIT_REFUSED = 4;
export const EXIT_TIMEOUT = 124;

/** The hub's own reasons, added to the local reason tokens. */
export const HUB_REASONS = {
  /** The host does not let a hub fire this action (or a `confirm` action, never fired remotely). */
  notAllowed: 'not-allowed',
  /** The request never left the hub: the host's link was down. Nothing fired; retrying is safe. */
  undelivered: 'undelivered',
  /** The request went out and no answer came by the deadline (or the link died first). The action
   * may have fired; the same slot replays what happened once the host is back. */
  firedUnknown: 'fired-unknown',
} as const;

const SLOT = /^[A-Za-z0-9._:-]+$/;

export const actBodySchema = z.strictObject({
  host: z
    .string()
    .min(1)
    .max(253)
    .regex(/^[A-Za-z0-9._-]+$/, 'host names use letters, digits, dot, dash, underscore'),
  server: z.string().min(1).max(4096).optional(),
  pane: z.string().regex(/^%\d+$/, 'a pane id looks like %12'),
  action: z
    .string()
    .min(1)
    .max(64)
    .regex(/^[a-z0-9_-]+$/, 'action names use a-z, 0-9, dash, underscore'),
  expect_episode_ms: z.number().int().nonnegative().nullable().optional(),
  expect_permission_request: z.string().min(1).max(256).nullable().optional(),
  slot: z.string().min(1).max(200).regex(SLOT, 'a slot uses letters, digits and . _ : -').optional(),
  expect_prompt: z.string().regex(PROMPT_ID_RE, PROMPT_ID_RULE).nullable().optional(),
});
export type ActBody = z.infer<typeof actBodySchema>;

export interface HostView {
  /** The store has a record of this host (declared in config or heard from). */
  known: boolean;
  /** This host's rows, any server. */
  rows: readonly Pick<FleetRow, 'pane' | 'server' | 'locator'>[];
  /** What the host said it allows in its last hello; null when it never said hello. */
  actionsAllowed: readonly string[] | null;
  /** A session for the host is open right now. */
  linkOpen: boolean;
}

export type ActPlan =
  | { kind: 'http'; status: 404 | 409; body: { schema: 1; error: string; candidates?: { server: string; pane: string; locator: string }[] } }
  | { kind: 'result'; result: ActResult }
  | { kind: 'forward'; server: string };

/** A result the hub states itself, in the wire key order. */
export function hubResult(b: Pick<ActBody, 'action' | 'pane' | 'host'>, server: string, outcome: 'refused' | 'timeout', reason: string): ActResult {
  return {
    schema: 1,
    action: b.action,
    pane: b.pane,
    outcome,
    exit_code: outcome === 'refused' ? EXIT_REFUSED : EXIT_TIMEOUT,
    reason,
    host: b.host,
    server,
  };
}

type Placed = Extract<ActPlan, { kind: 'http' | 'forward' }>;

/** Which server of the host holds the pane: the one named, else the only one with that pane id. */
export function placePane(b: Pick<ActBody, 'host' | 'server' | 'pane'>, v: Pick<HostView, 'known' | 'rows'>): Placed {
  const err = (status: 404 | 409, error: string, candidates?: { server: string; pane: string; locator: string }[]): Placed => ({
    kind: 'http',
    status,
    body: candidates ? { schema: 1, error, candidates } : { schema: 1, error },
  });
  if (!v.known) return err(404, `unknown host "${b.host}"`);
  let server = b.server;
  if (server === undefined) {
    // Pane ids are per tmux server; without a server the hub only guesses when there is one answer.
    const hits = v.rows.filter((r) => r.pane === b.pane);
    if (hits.length === 0) return err(404, `no agent pane ${b.pane} on host ${b.host}; name the server if the pane is new`);
    if (hits.length > 1) {
      const names = hits.map((r) => r.server).join(', ');
      return err(
        409,
        `pane ${b.pane} exists on ${hits.length} servers of ${b.host} (${names}); name one with "server"`,
        hits.map((r) => ({ server: r.server, pane: r.pane, locator: r.locator })),
      );
    }
    server = hits[0]!.server;
  }
  return { kind: 'forward', server };
}

export function planAct(b: ActBody, v: HostView): ActPlan {
  const placed = placePane(b, v);
  if (placed.kind === 'http') return placed;
  const server = placed.server;
  // A host that never said hello has not refused anything yet: it is only unreachable.
  if (v.actionsAllowed !== null && !v.actionsAllowed.includes(b.action))
    return { kind: 'result', result: hubResult(b, server, 'refused', HUB_REASONS.notAllowed) };
  if (!v.linkOpen) return { kind: 'result', result: hubResult(b, server, 'timeout', HUB_REASONS.undelivered) };
  return { kind: 'forward', server };
}

/**
 * The host's answer as the hub passes it on: the local result's keys, `cached` when the host
 * said it, and `host`/`server` as the hub routed them (a collector cannot relabel where it ran).
 */
export function routedResult(r: ActResult, host: string, server: string): ActResult {
  return {
    schema: 1,
    action: r.action,
    pane: r.pane,
    outcome: r.outcome,
    exit_code: r.exit_code,
    reason: r.reason,
    ...(r.cached !== undefined ? { cached: r.cached } : {}),
    host,
    server,
  };
}
