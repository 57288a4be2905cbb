import { describe, expect, test } from 'vitest';
import { actBodySchema, hubResult, planAct, routedResult, type HostView } from '../../hub/http/act-plan.js';

const S1 = '/tmp/tmux-1000/default';
const S2 = '/tmp/tmux-1000/work';
const body = { host: 'build1', pane: '%3', action: 'approve' };
const view = (over: Partial<HostView> = {}): HostView => ({
  known: true,
  rows: [{ pane: '%3', server: S1, locator: 'main:1.0' }],
  actionsAllowed: ['approve', 'deny'],
  linkOpen: true,
  ...over,
});

describe('planAct', () => {
  test('forwards to the one server holding the pane', () => {
    expect(planAct(body, view())).toEqual({ kind: 'forward', server: S1 });
  });

  test('an unknown host is a 404, before anything else is looked at', () => {
    const p = planAct(body, view({ known: false, rows: [], actionsAllowed: [], linkOpen: false }));
    expect(p).toMatchObject({ kind: 'http', status: 404 });
  });

  test('a pane on no server of the host is a 404 when no server is named, forwarded when one is', () => {
    expect(planAct({ ...body, pane: '%4' }, view())).toMatchObject({ kind: 'http', status: 404 });
    expect(planAct({ ...body, pane: '%4', server: S2 }, view())).toEqual({ kind: 'forward', server: S2 });
  });

  test('a pane id on two servers is a 409 naming both; naming one resolves it', () => {
    const rows = [
      { pane: '%3', server: S1, locator: 'a:1.0' },
      { pane: '%3', server: S2, locator: 'b:2.0' },
    ];
    const p = planAct(body, view({ rows }));
    expect(p).toMatchObject({ kind: 'http', status: 409 });
    if (p.kind !== 'http') throw new Error('unreachable');
    expect(p.body.candidates).toEqual([
      { server: S1, pane: '%3', locator: 'a:1.0' },
      { server: S2, pane: '%3', locator: 'b:2.0' },
    ]);
    expect(p.body.error).toContain(S1);
    expect(p.body.error).toContain(S2);
    expect(planAct({ ...body, server: S2 }, view({ rows }))).toEqual({ kind: 'forward', server: S2 });
  });

  test('an action the host does not allow is refused (exit 4) even while the link is down', () => {
    for (const linkOpen of [true, false]) {
      const p = planAct({ ...body, action: 'compact' }, view({ linkOpen }));
      expect(p).toEqual({ kind: 'result', result: hubResult({ ...body, action: 'compact' }, S1, 'refused', 'not-allowed') });
    }
    expect(hubResult(body, S1, 'refused', 'not-allowed').exit_code).toBe(4);
  });

  test('a host that never said hello refuses nothing: undelivered', () => {
    expect(planAct(body, view({ actionsAllowed: null, linkOpen: false }))).toMatchObject({
      kind: 'result',
      result: { outcome: 'timeout', reason: 'undelivered' },
    });
  });

  test('an allowed action on a host without an open link is undelivered (exit 124)', () => {
    const p = planAct(body, view({ linkOpen: false }));
    expect(p).toEqual({
      kind: 'result',
      result: { schema: 1, action: 'approve', pane: '%3', outcome: 'timeout', exit_code: 124, reason: 'undelivered', host: 'build1', server: S1 },
    });
  });
});

describe('routedResult', () => {
  const answer = { schema: 1 as const, action: 'approve', pane: '%3', outcome: 'sent', exit_code: 0, reason: null, host: 'laptop', server: '/elsewhere' };

  test('host and server are where the hub routed it, whatever the collector wrote', () => {
    expect(routedResult(answer, 'build1', S1)).toEqual({ ...answer, host: 'build1', server: S1 });
  });

  test('keeps cached when given (true or false), omits it when absent, drops unknown keys', () => {
    expect(Object.keys(routedResult({ ...answer, cached: false }, 'build1', S1))).toEqual([
      'schema',
      'action',
      'pane',
      'outcome',
      'exit_code',
      'reason',
      'cached',
      'host',
      'server',
    ]);
    expect(routedResult({ ...answer, cached: true }, 'build1', S1).cached).toBe(true);
    expect(routedResult({ ...answer, title: 'secret' }, 'build1', S1)).not.toHaveProperty('title');
    expect(routedResult(answer, 'build1', S1)).not.toHaveProperty('cached');
  });
});

describe('actBodySchema', () => {
  const ok = (b: unknown) => actBodySchema.safeParse(b).success;

  test('takes the documented keys and refuses unknown ones', () => {
    expect(ok({ ...body, server: S1, expect_episode_ms: 5, expect_permission_request: 'r1', slot: 'a.b:c-d_1' })).toBe(true);
    expect(ok({ ...body, expect_episode_ms: null, expect_permission_request: null })).toBe(true);
    expect(ok({ ...body, force: true })).toBe(false);
    expect(ok({ ...body, yes: true })).toBe(false);
  });

  test('slot length: 1 and 200 accepted, 0 and 201 refused; odd characters refused', () => {
    expect(ok({ ...body, slot: 'x' })).toBe(true);
    expect(ok({ ...body, slot: 'x'.repeat(200) })).toBe(true);
    expect(ok({ ...body, slot: '' })).toBe(false);
    expect(ok({ ...body, slot: 'x'.repeat(201) })).toBe(false);
    expect(ok({ ...body, slot: 'a b' })).toBe(false);
  });

  test('episode: 0 accepted, -1 and fractions refused; pane must be a pane id', () => {
    expect(ok({ ...body, expect_episode_ms: 0 })).toBe(true);
    expect(ok({ ...body, expect_episode_ms: -1 })).toBe(false);
    expect(ok({ ...body, expect_episode_ms: 1.5 })).toBe(false);
    expect(ok({ ...body, pane: '3' })).toBe(false);
    expect(ok({ ...body, action: 'Approve' })).toBe(false);
  });
});
