import { describe, expect, it } from 'vitest';
import { EMPTY_SELECTOR, type Selector } from '../../shared/selectors.js';
import type { State } from '../../shared/tokens.js';
import {
  goalText,
  parseWaitSpec,
  parseWaitTimeout,
  satisfies,
  timeoutMessage,
  Waiter,
  WaitUsageError,
  type MemberKey,
  type Observation,
  type WaitFlags,
  type WaitRow,
  type WaitSpec,
  type WaitStep,
} from '../../shared/wait.js';

type Row = WaitRow;

function row(pane: string, state: State, extra: Partial<Row> = {}): Row {
  return {
    pane,
    agent: 'claude',
    state,
    attention: false,
    locator: `main:${pane.slice(1)}.0`,
    repo: null,
    branch: null,
    host: 'h1',
    server: '/tmp/tmux-0/default',
    episode_ms: 1000,
    ...extra,
  };
}

function obs(rows: Row[], opts: { alive?: (k: MemberKey) => boolean | null; stale?: string[] } = {}): Observation<Row> {
  return { rows, paneAlive: opts.alive ?? (() => true), staleHosts: new Set(opts.stale ?? []) };
}

const sel = (s: Partial<Selector> = {}): Selector => ({ ...EMPTY_SELECTOR, ...s });

function spec(target: WaitSpec['target'], extra: Partial<WaitSpec> = {}): WaitSpec {
  return { until: ['idle'], since: null, target, selector: sel(), ...extra };
}

function done(step: WaitStep<Row>): Extract<WaitStep<Row>, { kind: 'done' }> {
  if (step.kind !== 'done') throw new Error(`expected done, got ${JSON.stringify(step)}`);
  return step;
}

function exit(step: WaitStep<Row>): Extract<WaitStep<Row>, { kind: 'exit' }> {
  if (step.kind !== 'exit') throw new Error(`expected exit, got ${JSON.stringify(step)}`);
  return step;
}

describe('satisfies', () => {
  it('reads --until as a subset: idle matches done panes, done only done ones', () => {
    const doneRow = row('%1', 'idle', { attention: true });
    const plainIdle = row('%1', 'idle');
    expect(satisfies({ until: ['idle'], since: null }, doneRow)).toBe(true);
    expect(satisfies({ until: ['done'], since: null }, doneRow)).toBe(true);
    expect(satisfies({ until: ['done'], since: null }, plainIdle)).toBe(false);
    expect(satisfies({ until: ['blocked', 'idle'], since: null }, plainIdle)).toBe(true);
    expect(satisfies({ until: ['working'], since: null }, plainIdle)).toBe(false);
  });

  it('compares --since strictly against episode_ms: at the floor fails, one over passes', () => {
    const r = row('%1', 'idle', { episode_ms: 5000 });
    expect(satisfies({ until: ['idle'], since: 4999 }, r)).toBe(true);
    expect(satisfies({ until: ['idle'], since: 5000 }, r)).toBe(false);
    expect(satisfies({ until: ['idle'], since: 5001 }, r)).toBe(false);
    expect(satisfies({ until: ['idle'], since: 0 }, row('%1', 'idle', { episode_ms: 0 }))).toBe(false);
  });
});

describe('parseWaitSpec', () => {
  const parse = (f: WaitFlags, s: Partial<Selector> = {}) => parseWaitSpec(f, sel(s));
  const usage = (f: WaitFlags, s: Partial<Selector> = {}) => expect(() => parse(f, s)).toThrow(WaitUsageError);

  it('needs --until, with known tokens only', () => {
    usage({ any: true });
    usage({ any: true, until: 'idle,bogus' });
    usage({ any: true, until: ' , ' });
    expect(parse({ any: true, until: ' done, idle,done ' }).until).toEqual(['done', 'idle']);
  });

  it('takes exactly one target; --agent is the target when none is given', () => {
    usage({ until: 'idle' });
    usage({ until: 'idle', any: true, all: true });
    usage({ until: 'idle', pane: '%1', count: '2' });
    expect(parse({ until: 'idle' }, { agent: 'claude' }).target).toEqual({ kind: 'agent' });
    expect(parse({ until: 'idle', any: true }, { agent: 'claude' }).target).toEqual({ kind: 'any' });
    expect(parse({ until: 'idle', all: true }).target).toEqual({ kind: 'all' });
    expect(parse({ until: 'idle', pane: '%12' }).target).toEqual({ kind: 'pane', pane: '%12' });
  });

  it('refuses --pane with --agent or any other selector, and pane ids that are not %N', () => {
    usage({ until: 'idle', pane: '%1' }, { agent: 'claude' });
    usage({ until: 'idle', pane: '%1' }, { session: 'main' });
    usage({ until: 'idle', pane: '%1' }, { states: ['idle'] });
    usage({ until: 'idle', pane: 'main:0.0' });
    usage({ until: 'idle', pane: '%' });
    // --host only says where the pane lives (fleet).
    expect(parse({ until: 'idle', pane: '%1' }, { host: 'h1' }).target).toEqual({ kind: 'pane', pane: '%1' });
  });

  it('--count: 0 is refused, 1 is the smallest quorum', () => {
    usage({ until: 'idle', count: '0' });
    usage({ until: 'idle', count: '-1' });
    usage({ until: 'idle', count: 'two' });
    expect(parse({ until: 'idle', count: '1' }).target).toEqual({ kind: 'count', n: 1 });
    expect(parse({ until: 'idle', count: '2' }).target).toEqual({ kind: 'count', n: 2 });
  });

  it('--since takes non-negative integer milliseconds', () => {
    usage({ until: 'idle', any: true, since: '-1' });
    usage({ until: 'idle', any: true, since: '1.5' });
    expect(parse({ until: 'idle', any: true, since: '0' }).since).toBe(0);
    expect(parse({ until: 'idle', any: true, since: '1700000000000' }).since).toBe(1700000000000);
    expect(parse({ until: 'idle', any: true }).since).toBeNull();
  });
});

describe('parseWaitTimeout', () => {
  it('accepts 0 and fractions, refuses negatives and words', () => {
    expect(parseWaitTimeout('0')).toBe(0);
    expect(parseWaitTimeout('0.25')).toBe(250);
    expect(parseWaitTimeout('3')).toBe(3000);
    expect(() => parseWaitTimeout('-1')).toThrow(WaitUsageError);
    expect(() => parseWaitTimeout('soon')).toThrow(WaitUsageError);
  });

  it('names the goal in the timeout message', () => {
    expect(goalText({ until: ['idle', 'done'], since: null })).toBe('idle, done');
    expect(timeoutMessage({ until: ['done'], since: 42 }, '5')).toBe('timed out after 5s waiting for done since 42');
  });
});

describe('--pane', () => {
  it('returns the row once it satisfies, as a single row', () => {
    const w = new Waiter<Row>(spec({ kind: 'pane', pane: '%2' }));
    expect(w.step(obs([row('%2', 'working')])).kind).toBe('continue');
    const d = done(w.step(obs([row('%1', 'idle'), row('%2', 'idle')])));
    expect(d.form).toBe('row');
    expect(d.rows.map((r) => r.pane)).toEqual(['%2']);
  });

  it('waits forever on a pane never seen, hinting once when the pane exists without an agent', () => {
    const w = new Waiter<Row>(spec({ kind: 'pane', pane: '%9' }));
    const first = w.step(obs([row('%1', 'idle')], { alive: (k) => k.pane === '%9' }));
    expect(first).toEqual({ kind: 'continue', notes: ['pane %9 runs no agent yet; waiting for one to start'] });
    expect(w.step(obs([row('%1', 'idle')], { alive: (k) => k.pane === '%9' }))).toEqual({ kind: 'continue', notes: [] });
    const missing = new Waiter<Row>(spec({ kind: 'pane', pane: '%9' }));
    expect(missing.step(obs([], { alive: () => false }))).toEqual({ kind: 'continue', notes: [] });
    expect(missing.step(obs([], { alive: () => null }))).toEqual({ kind: 'continue', notes: [] });
  });

  it('after the row was seen: row gone under a live pane is 4, with the pane is 3', () => {
    const a = new Waiter<Row>(spec({ kind: 'pane', pane: '%2' }, { until: ['done'] }));
    a.step(obs([row('%2', 'working')]));
    const four = exit(a.step(obs([], { alive: (k) => k.pane === '%2' })));
    expect(four.code).toBe(4);
    expect(four.message).toBe('the agent on pane %2 exited before reaching done (exit 4)');

    const b = new Waiter<Row>(spec({ kind: 'pane', pane: '%2' }, { since: 7 }));
    b.step(obs([row('%2', 'working')]));
    const three = exit(b.step(obs([], { alive: () => false })));
    expect(three.code).toBe(3);
    expect(three.message).toBe('the waited-on pane %2 vanished before reaching idle since 7');
  });

  it('treats an unknown pane liveness as the pane having vanished', () => {
    const w = new Waiter<Row>(spec({ kind: 'pane', pane: '%2' }));
    w.step(obs([row('%2', 'working')]));
    expect(exit(w.step(obs([], { alive: () => null }))).code).toBe(3);
  });

  it('tracks the pane by (host, server, pane): the same id elsewhere is not it', () => {
    const w = new Waiter<Row>(spec({ kind: 'pane', pane: '%2' }));
    w.step(obs([row('%2', 'working', { server: '/s/a' })]));
    const step = w.step(obs([row('%2', 'idle', { server: '/s/b' })], { alive: () => false }));
    expect(exit(step).code).toBe(3);
  });

  it('refuses a pane id that several servers share (fleet) and accepts it once the host narrows it', () => {
    const rows = [row('%2', 'idle', { host: 'a' }), row('%2', 'idle', { host: 'b' })];
    expect(exit(new Waiter<Row>(spec({ kind: 'pane', pane: '%2' })).step(obs(rows))).code).toBe(1);
    const narrowed = new Waiter<Row>(spec({ kind: 'pane', pane: '%2' }, { selector: sel({ host: 'b' }) }));
    expect(done(narrowed.step(obs(rows))).rows[0]!.host).toBe('b');
  });
});

describe('--agent', () => {
  const agentSpec = (extra: Partial<WaitSpec> = {}) => spec({ kind: 'agent' }, { selector: sel({ agent: 'codex' }), ...extra });

  it('keeps waiting while nothing matches, then pins the one match and evaluates it in the same cycle', () => {
    const w = new Waiter<Row>(agentSpec());
    expect(w.step(obs([row('%1', 'idle')])).kind).toBe('continue');
    expect(done(w.step(obs([row('%1', 'idle'), row('%3', 'idle', { agent: 'codex' })]))).rows[0]!.pane).toBe('%3');
  });

  it('once pinned, a second match does not matter and a departure ends it like --pane', () => {
    const w = new Waiter<Row>(agentSpec());
    w.step(obs([row('%3', 'working', { agent: 'codex' })]));
    expect(w.step(obs([row('%3', 'working', { agent: 'codex' }), row('%4', 'idle', { agent: 'codex' })])).kind).toBe('continue');
    expect(exit(w.step(obs([row('%4', 'idle', { agent: 'codex' })], { alive: (k) => k.pane === '%3' }))).code).toBe(4);
  });

  it('exits 1 naming the panes when the first match is ambiguous', () => {
    const w = new Waiter<Row>(agentSpec());
    const e = exit(w.step(obs([row('%3', 'idle', { agent: 'codex' }), row('%5', 'working', { agent: 'codex' })])));
    expect(e.code).toBe(1);
    expect(e.message).toBe('--agent "codex" matches 2 panes (%3, %5); target one with --pane');
  });

  it('names the host in messages when qualified (fleet)', () => {
    const w = new Waiter<Row>(agentSpec(), { qualify: true });
    const e = exit(w.step(obs([row('%3', 'idle', { agent: 'codex', host: 'a' }), row('%3', 'idle', { agent: 'codex', host: 'b' })])));
    expect(e.message).toContain('(%3 on a, %3 on b)');
  });
});

describe('--any', () => {
  it('returns the first satisfying in-scope row in surface order', () => {
    const w = new Waiter<Row>(spec({ kind: 'any' }, { selector: sel({ agent: 'claude' }) }));
    const rows = [row('%1', 'working'), row('%2', 'idle', { agent: 'codex' }), row('%3', 'idle'), row('%4', 'idle')];
    const d = done(w.step(obs(rows)));
    expect(d.form).toBe('row');
    expect(d.rows.map((r) => r.pane)).toEqual(['%3']);
  });

  it('ignores departures', () => {
    const w = new Waiter<Row>(spec({ kind: 'any' }));
    w.step(obs([row('%1', 'working')]));
    expect(w.step(obs([], { alive: () => false }))).toEqual({ kind: 'continue', notes: [] });
  });
});

describe('--all', () => {
  it('exits 2 when the first cycle has no member in scope', () => {
    const w = new Waiter<Row>(spec({ kind: 'all' }, { selector: sel({ agent: 'codex' }) }));
    expect(exit(w.step(obs([row('%1', 'idle')]))).code).toBe(2);
  });

  it('needs every member satisfied in the same cycle, and later panes never join', () => {
    const w = new Waiter<Row>(spec({ kind: 'all' }));
    expect(w.step(obs([row('%1', 'working'), row('%2', 'working')])).kind).toBe('continue');
    expect(w.step(obs([row('%1', 'idle'), row('%2', 'working'), row('%3', 'working')])).kind).toBe('continue');
    // Each member satisfied once, but never both in one cycle: still waiting.
    expect(w.step(obs([row('%1', 'working'), row('%2', 'idle')])).kind).toBe('continue');
    const d = done(w.step(obs([row('%1', 'idle'), row('%2', 'idle'), row('%3', 'working')])));
    expect(d.form).toBe('document');
    expect(d.rows.map((r) => r.pane)).toEqual(['%1', '%2']);
  });

  it('pins only rows in scope at the first cycle (--state narrows membership)', () => {
    const w = new Waiter<Row>(spec({ kind: 'all' }, { selector: sel({ states: ['working'] }) }));
    expect(w.step(obs([row('%1', 'working'), row('%2', 'blocked')])).kind).toBe('continue');
    // The member left the selector's state but is still tracked; the non-member is never needed.
    expect(done(w.step(obs([row('%1', 'idle'), row('%2', 'blocked')]))).rows.map((r) => r.pane)).toEqual(['%1']);
  });

  it('a departed member ends the wait; the first terminal in member order wins', () => {
    const w = new Waiter<Row>(spec({ kind: 'all' }));
    w.step(obs([row('%1', 'working'), row('%2', 'working')]));
    const e = exit(w.step(obs([], { alive: (k) => k.pane === '%1' })));
    expect(e.code).toBe(4);
    expect(e.message).toContain('pane %1');
    const v = new Waiter<Row>(spec({ kind: 'all' }));
    v.step(obs([row('%1', 'working'), row('%2', 'working')]));
    expect(exit(v.step(obs([row('%1', 'idle')], { alive: () => false }))).code).toBe(3);
  });

  it('a member on a stale host never satisfies, and the waiter says so once', () => {
    const w = new Waiter<Row>(spec({ kind: 'all' }));
    const rows = [row('%1', 'idle', { host: 'a' }), row('%1', 'idle', { host: 'b' })];
    expect(w.step(obs(rows, { stale: ['b'] }))).toEqual({
      kind: 'continue',
      notes: ['host b is stale: its panes cannot satisfy the wait until it is heard from again'],
    });
    expect(w.step(obs(rows, { stale: ['b'] }))).toEqual({ kind: 'continue', notes: [] });
    expect(done(w.step(obs(rows))).rows).toHaveLength(2);
  });
});

describe('--count', () => {
  it('succeeds at exactly N satisfying rows (not N-1) and emits all of them', () => {
    const w = new Waiter<Row>(spec({ kind: 'count', n: 2 }));
    expect(w.step(obs([row('%1', 'idle'), row('%2', 'working'), row('%3', 'working')])).kind).toBe('continue');
    expect(done(w.step(obs([row('%1', 'idle'), row('%2', 'idle'), row('%3', 'working')]))).rows.map((r) => r.pane)).toEqual(['%1', '%2']);
    const more = new Waiter<Row>(spec({ kind: 'count', n: 2 }));
    const d = done(more.step(obs([row('%1', 'idle'), row('%2', 'idle'), row('%3', 'idle')])));
    expect(d.form).toBe('document');
    expect(d.rows).toHaveLength(3);
  });

  it('re-reads scope every cycle, ignores departures, and does not count stale hosts', () => {
    const w = new Waiter<Row>(spec({ kind: 'count', n: 1 }, { selector: sel({ agent: 'codex' }) }));
    expect(w.step(obs([row('%1', 'idle')])).kind).toBe('continue');
    const stale = w.step(obs([row('%5', 'idle', { agent: 'codex', host: 'z' })], { stale: ['z'] }));
    expect(stale.kind).toBe('continue');
    expect(stale.notes).toEqual(['host z is stale: its panes cannot satisfy the wait until it is heard from again']);
    expect(done(w.step(obs([row('%6', 'idle', { agent: 'codex' })]))).rows[0]!.pane).toBe('%6');
  });
});
