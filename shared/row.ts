// The agent row: one agent pane as every JSON surface shows it.
// Two forms come out of one writer: the local form (with the pane title) for surfaces on the
// same machine, and the protocol form (no title) for anything that leaves the host.

import { inertJson } from './terminal-text.js';
import { classOf, type State } from './tokens.js';

export interface AgentRow {
  pane: string;
  agent: string;
  state: State;
  detail: string | null;
  /** Legacy name of since_ms. */
  since: number;
  since_ms: number;
  episode_ms: number;
  locator: string;
  title: string;
  attention: boolean;
  done: boolean;
  session: string | null;
  transcript: string | null;
  permission_request: string | null;
  stamped_at_ms: number | null;
  context: number | null;
  context_at_ms: number | null;
  muted: boolean;
  tokens: number | null;
  quota: Record<string, unknown> | null;
  cost_usd: number | null;
  repo: string | null;
  branch: string | null;
  worktree: boolean | null;
  pending_tool: string | null;
  pending_call: string | null;
  pending_summary: string | null;
  server: string;
  host: string;
  /**
   * Opaque fingerprint of the prompt a blocked pane shows; null when not blocked. Optional in the
   * type only so rows built by older code still type-check; every writer emits it (as null).
   */
  prompt_id?: string | null;
}

export type ProtocolRow = Omit<AgentRow, 'title'>;

/** Key order of the local row (the newer contract's order). Pinned by a test. */
export const ROW_KEYS = [
  'pane',
  'agent',
  'state',
  'detail',
  'since',
  'since_ms',
  'episode_ms',
  'locator',
  'title',
  'attention',
  'done',
  'session',
  'transcript',
  'permission_request',
  'stamped_at_ms',
  'context',
  'context_at_ms',
  'muted',
  'tokens',
  'quota',
  'cost_usd',
  'repo',
  'branch',
  'worktree',
  'pending_tool',
  'pending_call',
  'pending_summary',
  'server',
  'host',
  'prompt_id',
] as const satisfies readonly (keyof AgentRow)[];

export const PROTOCOL_ROW_KEYS = ROW_KEYS.filter<Exclude<(typeof ROW_KEYS)[number], 'title'>>((k) => k !== 'title');

/** Re-emit a row with its keys in contract order; missing newer keys become null. */
function ordered<K extends string>(keys: readonly K[], row: Record<string, unknown>): Record<K, unknown> {
  const out = {} as Record<K, unknown>;
  for (const k of keys) out[k] = row[k] === undefined ? null : row[k];
  return out;
}

export function localRowObject(row: AgentRow): Record<string, unknown> {
  return ordered(ROW_KEYS, row as unknown as Record<string, unknown>);
}

/** The title-free form: the only difference from the local form is the missing `title`. */
export function protocolRowObject(row: AgentRow | ProtocolRow): ProtocolRow {
  return ordered(PROTOCOL_ROW_KEYS, row as unknown as Record<string, unknown>) as unknown as ProtocolRow;
}

/** `{schema, agents}` — the rows document of `ls --json` and every snapshot line. */
export function rowsDocument(rows: readonly Record<string, unknown>[]): { schema: 1; agents: Record<string, unknown>[] } {
  return { schema: 1, agents: rows.slice() };
}

/** `wait --json` on a single-pane target: the row itself with `schema` in front. */
export function singleRowDocument(row: Record<string, unknown>): Record<string, unknown> {
  return { schema: 1, ...row };
}

export function rowClass(row: Pick<AgentRow, 'state' | 'attention'>) {
  return classOf(row.state, row.attention);
}

/** Compact one-line JSON, the writer every JSON surface uses. */
export function toJsonLine(doc: unknown): string {
  // JSON.stringify escapes C0 but leaves DEL, C1 (0x9b is a CSI) and bidi overrides raw.
  return inertJson(JSON.stringify(doc));
}
