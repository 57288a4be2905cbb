import { describe, expect, it } from 'vitest';
import {
  chain,
  escapeFormatText,
  probeSupported,
  renderHold,
  renderHookCompanion,
  renderPlan,
  renderProbeRead,
  renderProbeUnset,
  renderPublish,
  renderRemove,
  renderRollups,
  renderSetpfProbe,
  suppressExpr,
} from '../../collector/core/stamp-render.js';
import { REMOVAL_SET } from '../../collector/core/store-codec.js';
import type { Guard, PublishPlan, StampedState } from '../../collector/core/types.js';

const NOW = 1_700_000_100_000;
const P = '%7';

function plan(over: Partial<PublishPlan> = {}): PublishPlan {
  return {
    kind: 'publish',
    state: 'blocked',
    detail: 'permission',
    source: 'capture',
    evidenceAt: NOW - 7,
    since: NOW - 7,
    stampedAt: NOW,
    hash: 42n,
    pid: 4242,
    name: 'claude',
    setAttention: true,
    episodeReset: false,
    guard: { kind: 'carve_out', captureAt: NOW - 7 },
    ...over,
  };
}

function stamp(over: Partial<StampedState> = {}): StampedState {
  return {
    state: 'blocked',
    detail: null,
    source: 'capture',
    evidenceAt: NOW - 10_000,
    since: NOW - 20_000,
    stampedAt: NOW - 9_000,
    attention: false,
    notifiedAt: null,
    turnAt: 0,
    hash: 9n,
    pid: 4242,
    session: null,
    subagents: [],
    ...over,
  };
}

const g = (key: string, s: string, v: string) => ['set-option', '-p', '-F', '-t', P, key, `#{?${s},#{${key}},${v}}`];
const plain = (key: string, v: string) => ['set-option', '-p', '-t', P, key, v];
const unset = (key: string) => ['set-option', '-p', '-u', '-t', P, key];

describe('chain', () => {
  it('joins commands with a literal ; argument and nothing at the ends', () => {
    expect(chain([['a', 'b'], ['c'], ['d', 'e']])).toEqual(['a', 'b', ';', 'c', ';', 'd', 'e']);
    expect(chain([['a']])).toEqual(['a']);
    expect(chain([])).toEqual([]);
  });
});

describe('suppressExpr', () => {
  it('renders the five guards exactly', () => {
    const cases: [Guard, string][] = [
      [{ kind: 'unconditional' }, '0'],
      [{ kind: 'protect_hook' }, '#{==:#{@agent_source},hook}'],
      [{ kind: 'carve_out', captureAt: 1700000000123 }, '#{&&:#{==:#{@agent_source},hook},#{e|<=:1700000000123,#{@agent_evidence_at}}}'],
      [{ kind: 'refresh_claim', state: 'idle' }, '#{?#{==:#{@agent_state},idle},0,1}'],
      // Ordered by the last hook event's own time, never by evidence_at; a minute ahead is a clock step.
      [{ kind: 'hook_arbitrate', sentAt: 1700000000456 }, '#{&&:#{e|<:1700000000456,#{@agent_hook_at}},#{e|<=:#{@agent_hook_at},1700000060456}}'],
    ];
    for (const [guard, expr] of cases) expect(suppressExpr(guard)).toBe(expr);
  });
});

describe('renderPublish, guarded', () => {
  const since = (state: string, stampedAt: number, newSince: number) =>
    `#{?#{&&:#{==:#{@agent_state},${state}},#{e|<=:#{@agent_since},${stampedAt + 2000}}},#{@agent_since},${newSince}}`;

  it('writes the tuple under one guard, since first, then the plain fields with stamped_at last', () => {
    const S = `#{&&:#{==:#{@agent_source},hook},#{e|<=:${NOW - 7},#{@agent_evidence_at}}}`;
    expect(renderPublish(P, plan(), { guarded: true, prev: null })).toEqual([
      g('@agent_since', S, since('blocked', NOW, NOW - 7)),
      g('@agent_state', S, 'blocked'),
      g('@agent_detail', S, 'permission'),
      g('@agent_source', S, 'capture'),
      g('@agent_evidence_at', S, String(NOW - 7)),
      g('@agent_attention', S, '1'),
      plain('@agent_hash', '42'),
      plain('@agent_pid', '4242'),
      plain('@agent_name', 'claude'),
      plain('@agent_stamped_at', String(NOW)),
    ]);
  });

  it.each<[Guard, string]>([
    [{ kind: 'unconditional' }, '0'],
    [{ kind: 'protect_hook' }, '#{==:#{@agent_source},hook}'],
    [{ kind: 'refresh_claim', state: 'working' }, '#{?#{==:#{@agent_state},working},0,1}'],
  ])('uses the plan guard %j for every tuple field', (guard, S) => {
    const cmds = renderPublish(P, plan({ state: 'working', detail: null, setAttention: false, guard }), { guarded: true, prev: null });
    expect(cmds).toEqual([
      g('@agent_since', S, since('working', NOW, NOW - 7)),
      g('@agent_state', S, 'working'),
      g('@agent_detail', S, ''),
      g('@agent_source', S, 'capture'),
      g('@agent_evidence_at', S, String(NOW - 7)),
      plain('@agent_hash', '42'),
      plain('@agent_pid', '4242'),
      plain('@agent_name', 'claude'),
      plain('@agent_stamped_at', String(NOW)),
    ]);
  });

  it('a hook stamp writes evidence_at before source and its own hook time, under its arbitration guard', () => {
    const S = `#{&&:#{e|<:${NOW},#{@agent_hook_at}},#{e|<=:#{@agent_hook_at},${NOW + 60000}}}`;
    const guard: Guard = { kind: 'hook_arbitrate', sentAt: NOW };
    const cmds = renderPublish(P, plan({ state: 'working', detail: null, source: 'hook', evidenceAt: NOW, since: NOW, setAttention: false, guard }), {
      guarded: true,
      prev: null,
    });
    expect(cmds).toEqual([
      g('@agent_since', S, since('working', NOW, NOW)),
      g('@agent_state', S, 'working'),
      g('@agent_detail', S, ''),
      g('@agent_evidence_at', S, String(NOW)),
      g('@agent_source', S, 'hook'),
      g('@agent_hook_at', S, String(NOW)),
      plain('@agent_hash', '42'),
      plain('@agent_pid', '4242'),
      plain('@agent_name', 'claude'),
      plain('@agent_stamped_at', String(NOW)),
    ]);
  });

  it('leaves out the hash when unknown and the name when empty', () => {
    const cmds = renderPublish(P, plan({ hash: null, name: '', setAttention: false }), { guarded: true, prev: null });
    expect(cmds.slice(-2)).toEqual([plain('@agent_pid', '4242'), plain('@agent_stamped_at', String(NOW))]);
    expect(cmds.map((c) => c[c.length - 2])).not.toContain('@agent_hash');
    expect(cmds.map((c) => c[c.length - 2])).not.toContain('@agent_name');
  });

  it('writes an unsafe detail as empty', () => {
    for (const detail of ['a,b', 'x}', '#{x}', 'a b', 'a\u0001']) {
      const cmds = renderPublish(P, plan({ detail }), { guarded: true, prev: null });
      expect(cmds[2]).toEqual(g('@agent_detail', suppressExpr(plan().guard), ''));
    }
  });
});

describe('renderPublish, episode reset', () => {
  it('writes plainly, unsets notify and turn markers, and sets attention when raised', () => {
    const cmds = renderPublish(P, plan({ episodeReset: true, guard: { kind: 'unconditional' } }), { guarded: true, prev: stamp() });
    expect(cmds).toEqual([
      plain('@agent_since', String(NOW - 7)),
      plain('@agent_state', 'blocked'),
      plain('@agent_detail', 'permission'),
      plain('@agent_source', 'capture'),
      plain('@agent_evidence_at', String(NOW - 7)),
      plain('@agent_attention', '1'),
      unset('@agent_notified_at'),
      unset('@agent_turn_at'),
      plain('@agent_hash', '42'),
      plain('@agent_pid', '4242'),
      plain('@agent_name', 'claude'),
      plain('@agent_stamped_at', String(NOW)),
    ]);
  });

  it('unsets attention and an absent or unsafe detail', () => {
    for (const detail of [null, 'a b']) {
      const cmds = renderPublish(P, plan({ episodeReset: true, setAttention: false, detail }), { guarded: false, prev: null });
      expect(cmds[2]).toEqual(unset('@agent_detail'));
      expect(cmds[5]).toEqual(unset('@agent_attention'));
    }
  });
});

describe('renderPublish, advisory', () => {
  it('writes plainly in the same order, keeping a stored since of the same state run', () => {
    const prev = stamp({ state: 'blocked', since: NOW - 20_000 });
    expect(renderPublish(P, plan(), { guarded: false, prev })).toEqual([
      plain('@agent_since', String(NOW - 20_000)),
      plain('@agent_state', 'blocked'),
      plain('@agent_detail', 'permission'),
      plain('@agent_source', 'capture'),
      plain('@agent_evidence_at', String(NOW - 7)),
      plain('@agent_attention', '1'),
      plain('@agent_hash', '42'),
      plain('@agent_pid', '4242'),
      plain('@agent_name', 'claude'),
      plain('@agent_stamped_at', String(NOW)),
    ]);
  });

  it('takes the new since on a state change, with no prev, or past the clock-step skew', () => {
    const first = (prev: StampedState | null) => renderPublish(P, plan(), { guarded: false, prev })[0];
    expect(first(stamp({ state: 'idle' }))).toEqual(plain('@agent_since', String(NOW - 7)));
    expect(first(null)).toEqual(plain('@agent_since', String(NOW - 7)));
    expect(first(stamp({ since: NOW + 2000 }))).toEqual(plain('@agent_since', String(NOW + 2000)));
    expect(first(stamp({ since: NOW + 2001 }))).toEqual(plain('@agent_since', String(NOW - 7)));
  });

  it('never clears attention and unsets an empty detail', () => {
    const cmds = renderPublish(P, plan({ setAttention: false, detail: null }), { guarded: false, prev: stamp({ attention: true }) });
    expect(cmds.some((c) => c.includes('@agent_attention'))).toBe(false);
    expect(cmds[2]).toEqual(unset('@agent_detail'));
  });
});

describe('renderHold', () => {
  it('touches only hash and stamped_at', () => {
    expect(renderHold(P, { kind: 'hold', stampedAt: NOW, hash: 18446744073709551615n })).toEqual([
      plain('@agent_hash', '18446744073709551615'),
      plain('@agent_stamped_at', String(NOW)),
    ]);
    expect(renderHold(P, { kind: 'hold', stampedAt: NOW, hash: null })).toEqual([plain('@agent_stamped_at', String(NOW))]);
  });
});

describe('renderRemove', () => {
  it('unsets the whole removal set in order', () => {
    const cmds = renderRemove(P);
    expect(cmds).toEqual(REMOVAL_SET.map((k) => unset(k)));
    expect(cmds[0]).toEqual(['set-option', '-p', '-u', '-t', P, '@agent_state']);
    expect(cmds).toHaveLength(36);
  });
});

describe('renderPlan', () => {
  it('dispatches by plan kind', () => {
    expect(renderPlan(P, { kind: 'remove' }, { guarded: true, prev: null })).toEqual(renderRemove(P));
    expect(renderPlan(P, { kind: 'hold', stampedAt: NOW, hash: 1n }, { guarded: true, prev: null })).toEqual(
      renderHold(P, { kind: 'hold', stampedAt: NOW, hash: 1n }),
    );
    expect(renderPlan(P, plan(), { guarded: false, prev: null })).toEqual(renderPublish(P, plan(), { guarded: false, prev: null }));
  });
});

describe('renderRollups', () => {
  it('sets window then session plainly', () => {
    expect(renderRollups(P, 'blocked:1 working:2', 'idle:3')).toEqual([
      ['set-option', '-w', '-t', P, '@agent_summary', 'blocked:1 working:2'],
      ['set-option', '-t', P, '@agent_session_summary', 'idle:3'],
    ]);
  });

  it('unsets an empty rollup, guarded or not', () => {
    const expected = [
      ['set-option', '-w', '-u', '-t', P, '@agent_summary'],
      ['set-option', '-u', '-t', P, '@agent_session_summary'],
    ];
    expect(renderRollups(P, '', '')).toEqual(expected);
    expect(renderRollups(P, '', '', { kind: 'hook_arbitrate', sentAt: NOW })).toEqual(expected);
  });

  it('rides a guard with -F', () => {
    const S = `#{&&:#{e|<:${NOW},#{@agent_hook_at}},#{e|<=:#{@agent_hook_at},${NOW + 60000}}}`;
    expect(renderRollups(P, 'working:1', '', { kind: 'hook_arbitrate', sentAt: NOW })).toEqual([
      ['set-option', '-w', '-F', '-t', P, '@agent_summary', `#{?${S},#{@agent_summary},working:1}`],
      ['set-option', '-u', '-t', P, '@agent_session_summary'],
    ]);
  });
});

describe('renderHookCompanion', () => {
  it('writes under the same guard', () => {
    expect(renderHookCompanion(P, '@agent_turn_at', String(NOW), { kind: 'hook_arbitrate', sentAt: NOW })).toEqual([
      'set-option',
      '-p',
      '-F',
      '-t',
      P,
      '@agent_turn_at',
      `#{?#{&&:#{e|<:${NOW},#{@agent_hook_at}},#{e|<=:#{@agent_hook_at},${NOW + 60000}}},#{@agent_turn_at},${NOW}}`,
    ]);
  });

  it('escapes format syntax in free text so it lands literally', () => {
    expect(escapeFormatText('a,b#c}d{e')).toBe('a#,b##c#}d{e');
    expect(renderHookCompanion(P, '@agent_session', 'x,y', { kind: 'unconditional' })[6]).toBe('#{?0,#{@agent_session},x#,y}');
  });
});

describe('the -F probe', () => {
  it('sets, reads back and unsets the probe key', () => {
    expect(renderSetpfProbe(P)).toEqual(['set-option', '-p', '-F', '-t', P, '@__tma_probe', '#{?#{==:1,1},ok,no}']);
    expect(renderProbeRead(P)).toEqual(['display-message', '-p', '-t', P, '#{@__tma_probe}']);
    expect(renderProbeUnset(P)).toEqual(['set-option', '-p', '-u', '-t', P, '@__tma_probe']);
  });

  it('reads only an expanded ok as support', () => {
    expect(probeSupported('ok\n')).toBe(true);
    expect(probeSupported('#{?#{==:1,1},ok,no}')).toBe(false);
    expect(probeSupported('')).toBe(false);
  });
});
