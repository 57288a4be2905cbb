// `tma wait` as a pure state machine: the verb loop feeds it one observation per cycle and it says
// whether to keep waiting, report rows, or end with an exit code. It knows nothing of tmux, clocks
// or hubs, so the local verb and the hub-side verb run the very same logic. Members are keyed by
// (host, server, pane) because pane ids repeat across servers and hosts.

import { isEmptySelector, parseStateList, selectRow, SelectorError, type SelectableRow, type Selector } from './selectors.js';
import { matchesToken, type SelectorToken } from './tokens.js';

/** What the waiter needs of a row; local rows and fleet rows both have it. */
export interface WaitRow extends SelectableRow {
  pane: string;
  server: string;
  episode_ms: number;
}

export interface MemberKey {
  host: string;
  server: string;
  pane: string;
}

export type WaitTarget = { kind: 'pane'; pane: string } | { kind: 'agent' } | { kind: 'any' } | { kind: 'all' } | { kind: 'count'; n: number };

export interface WaitSpec {
  until: SelectorToken[];
  /** Strict floor on `episode_ms`; null = none. */
  since: number | null;
  target: WaitTarget;
  selector: Selector;
}

export interface Observation<R extends WaitRow> {
  /** Every row of the cycle, unfiltered, in surface order. */
  rows: readonly R[];
  /** Does the pane still exist? null when the observer cannot tell (e.g. across a fleet). */
  paneAlive(key: MemberKey): boolean | null;
  /** Hosts whose rows are kept but no longer confirmed. */
  staleHosts: ReadonlySet<string>;
}

export type WaitStep<R> =
  | { kind: 'continue'; notes: string[] }
  | { kind: 'done'; notes: string[]; form: 'row' | 'document'; rows: R[] }
  | { kind: 'exit'; notes: string[]; code: 1 | 2 | 3 | 4; message: string };

export interface WaiterOptions {
  /** Name panes with their host in messages (fleet waiters, where `%5` alone is ambiguous). */
  qualify?: boolean;
}

export class WaitUsageError extends Error {}

export const keyOf = (r: MemberKey): MemberKey => ({ host: r.host, server: r.server, pane: r.pane });
const sameKey = (a: MemberKey, b: MemberKey) => a.host === b.host && a.server === b.server && a.pane === b.pane;

/** The goal as messages name it: `idle, done` or `done since 1700000000000`. */
export function goalText(spec: Pick<WaitSpec, 'until' | 'since'>): string {
  return spec.until.join(', ') + (spec.since === null ? '' : ` since ${spec.since}`);
}

export function timeoutMessage(spec: Pick<WaitSpec, 'until' | 'since'>, secs: string): string {
  return `timed out after ${secs}s waiting for ${goalText(spec)}`;
}

/** Does this row meet the goal: any `--until` token (subset reading) and a strictly newer episode. */
export function satisfies(spec: Pick<WaitSpec, 'until' | 'since'>, row: WaitRow): boolean {
  if (!spec.until.some((t) => matchesToken(t, row.state, row.attention))) return false;
  return spec.since === null || row.episode_ms > spec.since;
}

/** Raw flag values of `wait`, as either CLI parsed them. */
export interface WaitFlags {
  until?: string;
  pane?: string;
  any?: boolean;
  all?: boolean;
  count?: string;
  since?: string;
}

/**
 * Check the flag combination and build the spec. The target flags exclude each other; `--pane`
 * takes no selector except `--host` (which only names where the pane lives); with no target
 * flag, `--agent` is the target.
 */
export function parseWaitSpec(flags: WaitFlags, selector: Selector): WaitSpec {
  if (flags.until === undefined) throw new WaitUsageError('wait needs --until STATES');
  let until: SelectorToken[];
  try {
    until = parseStateList(flags.until);
  } catch (e) {
    if (e instanceof SelectorError) throw new WaitUsageError(`--until: ${e.message}`);
    throw e;
  }
  const given = [
    flags.pane !== undefined && '--pane',
    flags.any === true && '--any',
    flags.all === true && '--all',
    flags.count !== undefined && '--count',
  ].filter((x): x is string => x !== false);
  if (given.length > 1) throw new WaitUsageError(`${given.join(' and ')} cannot be combined`);

  let since: number | null = null;
  if (flags.since !== undefined) {
    if (!/^\d+$/.test(flags.since) || !Number.isSafeInteger(Number(flags.since))) {
      throw new WaitUsageError(`--since takes epoch milliseconds, not "${flags.since}"`);
    }
    since = Number(flags.since);
  }

  let target: WaitTarget;
  if (flags.pane !== undefined) {
    if (!/^%\d+$/.test(flags.pane)) throw new WaitUsageError(`--pane takes a pane id such as %3, not "${flags.pane}"`);
    if (selector.agent !== null) throw new WaitUsageError('--pane and --agent cannot be combined');
    if (!isEmptySelector({ ...selector, host: null })) throw new WaitUsageError('--pane takes no selector flags');
    target = { kind: 'pane', pane: flags.pane };
  } else if (flags.all) target = { kind: 'all' };
  else if (flags.count !== undefined) {
    if (!/^\d+$/.test(flags.count) || Number(flags.count) < 1 || !Number.isSafeInteger(Number(flags.count))) {
      throw new WaitUsageError(`--count takes a number of at least 1, not "${flags.count}"`);
    }
    target = { kind: 'count', n: Number(flags.count) };
  } else if (flags.any) target = { kind: 'any' };
  else if (selector.agent !== null) target = { kind: 'agent' };
  else throw new WaitUsageError('wait needs a target: --pane ID, --agent NAME, --any, --all or --count N');
  return { until, since, target, selector };
}

/** `--timeout SECS` as milliseconds; fractions allowed, negatives and junk are not. */
export function parseWaitTimeout(raw: string): number {
  if (!/^\d+(\.\d+)?$/.test(raw)) throw new WaitUsageError(`--timeout takes seconds, not "${raw}"`);
  return Math.round(Number(raw) * 1000);
}

/**
 * One wait, fed observation after observation. A pinned pane (from `--pane`, or `--agent` once
 * it matched exactly one row) and `--all` members track their rows by key; `--any` and `--count`
 * re-read the scope each time and ignore departures.
 */
export class Waiter<R extends WaitRow> {
  private pinned: MemberKey | null = null;
  private members: MemberKey[] | null = null;
  private hinted = false;
  private readonly notedHosts = new Set<string>();

  constructor(
    readonly spec: WaitSpec,
    private readonly opts: WaiterOptions = {},
  ) {}

  step(obs: Observation<R>): WaitStep<R> {
    const notes: string[] = [];
    const t = this.spec.target;
    switch (t.kind) {
      case 'pane':
        return this.stepPane(obs, notes, t.pane);
      case 'agent':
        return this.stepAgent(obs, notes);
      case 'any':
        return this.stepAny(obs, notes);
      case 'all':
        return this.stepAll(obs, notes);
      case 'count':
        return this.stepCount(obs, notes, t.n);
    }
  }

  private label(k: MemberKey): string {
    return this.opts.qualify && k.host !== '' ? `${k.pane} on ${k.host}` : k.pane;
  }

  private inScope(row: R): boolean {
    return selectRow(this.spec.selector, row);
  }

  /** A row on a stale host is kept for display but cannot count; say so once per host. */
  private usable(row: R, obs: Observation<R>, notes: string[]): boolean {
    if (!obs.staleHosts.has(row.host)) return true;
    if (!this.notedHosts.has(row.host)) {
      this.notedHosts.add(row.host);
      notes.push(`host ${row.host} is stale: its panes cannot satisfy the wait until it is heard from again`);
    }
    return false;
  }

  private met(row: R, obs: Observation<R>, notes: string[]): boolean {
    return this.usable(row, obs, notes) && satisfies(this.spec, row);
  }

  /** A tracked row is gone: the pane went with it (3), or only the agent did (4). */
  private departure(key: MemberKey, obs: Observation<R>, notes: string[]): WaitStep<R> {
    const goal = goalText(this.spec);
    // Without a way to look at the pane, the row's departure is all there is to report.
    if (obs.paneAlive(key) === true) {
      return { kind: 'exit', notes, code: 4, message: `the agent on pane ${this.label(key)} exited before reaching ${goal} (exit 4)` };
    }
    return { kind: 'exit', notes, code: 3, message: `the waited-on pane ${this.label(key)} vanished before reaching ${goal}` };
  }

  private stepPinned(key: MemberKey, obs: Observation<R>, notes: string[]): WaitStep<R> {
    const row = obs.rows.find((r) => sameKey(r, key));
    if (!row) return this.departure(key, obs, notes);
    if (this.met(row, obs, notes)) return { kind: 'done', notes, form: 'row', rows: [row] };
    return { kind: 'continue', notes };
  }

  private stepPane(obs: Observation<R>, notes: string[], pane: string): WaitStep<R> {
    if (this.pinned) return this.stepPinned(this.pinned, obs, notes);
    const host = this.spec.selector.host;
    const found = obs.rows.filter((r) => r.pane === pane && (host === null || r.host === host));
    if (found.length > 1) {
      const where = found.map((r) => `${r.host} ${r.server}`).join(', ');
      // One host's servers all number their panes from %0: there the server is what to name.
      const name = found.every((r) => r.host === found[0]!.host) ? 'name its server with -L or -S' : 'name its host';
      return { kind: 'exit', notes, code: 1, message: `--pane ${pane} matches ${found.length} panes (${where}); ${name}` };
    }
    const row = found[0];
    if (row) {
      this.pinned = keyOf(row);
      return this.stepPinned(this.pinned, obs, notes);
    }
    // Never seen: a pane that does not exist (yet) is waited on forever, like the reference.
    if (!this.hinted && obs.paneAlive({ host: host ?? '', server: '', pane }) === true) {
      this.hinted = true;
      notes.push(`pane ${pane} runs no agent yet; waiting for one to start`);
    }
    return { kind: 'continue', notes };
  }

  private stepAgent(obs: Observation<R>, notes: string[]): WaitStep<R> {
    if (this.pinned) return this.stepPinned(this.pinned, obs, notes);
    const found = obs.rows.filter((r) => this.inScope(r));
    if (found.length === 0) return { kind: 'continue', notes };
    if (found.length > 1) {
      const list = found.map((r) => this.label(r)).join(', ');
      return {
        kind: 'exit',
        notes,
        code: 1,
        message: `--agent "${this.spec.selector.agent}" matches ${found.length} panes (${list}); target one with --pane`,
      };
    }
    this.pinned = keyOf(found[0]!);
    return this.stepPinned(this.pinned, obs, notes);
  }

  private stepAny(obs: Observation<R>, notes: string[]): WaitStep<R> {
    for (const row of obs.rows) {
      if (this.inScope(row) && this.met(row, obs, notes)) return { kind: 'done', notes, form: 'row', rows: [row] };
    }
    return { kind: 'continue', notes };
  }

  private stepAll(obs: Observation<R>, notes: string[]): WaitStep<R> {
    if (this.members === null) {
      this.members = obs.rows.filter((r) => this.inScope(r)).map(keyOf);
      if (this.members.length === 0) {
        return { kind: 'exit', notes, code: 2, message: '--all: no agent pane matches, so there is nothing to wait for' };
      }
    }
    const rows: R[] = [];
    for (const key of this.members) {
      const row = obs.rows.find((r) => sameKey(r, key));
      if (!row) return this.departure(key, obs, notes);
      rows.push(row);
    }
    // Every member is checked (not just up to the first miss) so each stale host gets its note.
    const met = rows.map((r) => this.met(r, obs, notes));
    if (!met.every(Boolean)) return { kind: 'continue', notes };
    return { kind: 'done', notes, form: 'document', rows: obs.rows.filter((r) => rows.includes(r)) };
  }

  private stepCount(obs: Observation<R>, notes: string[], n: number): WaitStep<R> {
    const hits = obs.rows.filter((r) => this.inScope(r) && this.met(r, obs, notes));
    if (hits.length >= n) return { kind: 'done', notes, form: 'document', rows: hits };
    return { kind: 'continue', notes };
  }
}
