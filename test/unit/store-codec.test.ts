import { describe, expect, it } from 'vitest';
import {
  BOOKKEEPING_KEYS,
  CLOCK_STEP_SKEW_MS,
  REMOVAL_SET,
  TUPLE_KEYS,
  decodeStamp,
  episodeAt,
  isClockStepped,
  isInProgress,
  writableDetail,
  type OptionValues,
} from '../../collector/core/store-codec.js';
import type { StampedState } from '../../collector/core/types.js';

const T = 1_700_000_000_000;

function full(over: OptionValues = {}): OptionValues {
  return {
    '@agent_name': 'claude',
    '@agent_state': 'blocked',
    '@agent_detail': 'permission',
    '@agent_source': 'hook',
    '@agent_evidence_at': String(T + 10),
    '@agent_since': String(T),
    '@agent_stamped_at': String(T + 20),
    '@agent_attention': '1',
    '@agent_notified_at': String(T + 30),
    '@agent_turn_at': String(T + 5),
    '@agent_hash': '18446744073709551615',
    '@agent_pid': '4242',
    '@agent_session': 'sess-1',
    '@agent_subagents': 'a  b\tc',
    ...over,
  };
}

function decoded(opts: OptionValues): StampedState {
  const r = decodeStamp(opts);
  if (!r.ok) throw new Error(`unexpected problem: ${r.problem}`);
  if (r.stamp === null) throw new Error('unexpected null stamp');
  return r.stamp;
}

function problem(opts: OptionValues): string {
  const r = decodeStamp(opts);
  if (r.ok) throw new Error('expected a decode problem');
  return r.problem;
}

describe('key sets', () => {
  it('lists the tuple in list-panes order', () => {
    expect(TUPLE_KEYS).toEqual([
      '@agent_name',
      '@agent_state',
      '@agent_detail',
      '@agent_source',
      '@agent_evidence_at',
      '@agent_since',
      '@agent_stamped_at',
      '@agent_attention',
      '@agent_notified_at',
      '@agent_turn_at',
      '@agent_hash',
      '@agent_pid',
      '@agent_session',
      '@agent_subagents',
    ]);
  });

  it('lists bookkeeping in list-panes order', () => {
    expect(BOOKKEEPING_KEYS).toEqual([
      '@tma_title_match_pid',
      '@tma_reg_dead_since',
      '@agent_ignore',
      '@agent_mute_until',
      '@agent_context_pct',
      '@agent_context_at',
      '@agent_tokens',
      '@agent_tokens_at',
      '@agent_context_notified_at',
      '@agent_model',
      '@agent_permission_request',
      '@agent_api_endpoint',
    ]);
  });

  it('removes the v0.4.4 set plus the newer page extras, each once, and none of the survivors', () => {
    const v044 = [
      '@agent_state',
      '@agent_detail',
      '@agent_source',
      '@agent_evidence_at',
      '@agent_since',
      '@agent_stamped_at',
      '@agent_attention',
      '@agent_notified_at',
      '@agent_turn_at',
      '@agent_hash',
      '@agent_pid',
      '@agent_name',
      '@agent_session',
      '@agent_subagents',
      '@agent_context_pct',
      '@agent_context_at',
      '@agent_tokens',
      '@agent_tokens_at',
      '@agent_context_notified_at',
      '@agent_model',
      '@agent_permission_request',
      '@agent_api_endpoint',
      '@tma_title_match_pid',
      '@tma_reg_dead_since',
    ];
    const newer = [
      '@agent_quota_pct',
      '@agent_quota_window',
      '@agent_quota_resets_at',
      '@agent_quota_at',
      '@agent_cost_usd',
      '@agent_pending_tool',
      '@agent_pending_call',
      '@agent_pending_summary',
    ];
    const ours = ['@tma_prompt_id', '@tma_answered', '@agent_hook_at', '@tma_hook_request'];
    expect([...REMOVAL_SET].sort()).toEqual([...v044, ...newer, ...ours].sort());
    expect(new Set(REMOVAL_SET).size).toBe(REMOVAL_SET.length);
    for (const survivor of ['@agent_action', '@tma_watch_pid', '@agent_mute_until', '@agent_ignore']) {
      expect(REMOVAL_SET).not.toContain(survivor);
    }
    // v0.4.4 keys keep their relative order.
    expect(REMOVAL_SET.filter((k) => v044.includes(k))).toEqual(v044);
  });
});

describe('decodeStamp', () => {
  it('reads a complete tuple', () => {
    expect(decoded(full())).toEqual({
      state: 'blocked',
      detail: 'permission',
      source: 'hook',
      evidenceAt: T + 10,
      since: T,
      stampedAt: T + 20,
      attention: true,
      notifiedAt: T + 30,
      turnAt: T + 5,
      hash: 18446744073709551615n,
      pid: 4242,
      session: 'sess-1',
      subagents: ['a', 'b', 'c'],
    });
  });

  it('is not stamped without @agent_state, absent or empty', () => {
    expect(decodeStamp({})).toEqual({ ok: true, stamp: null });
    expect(decodeStamp(full({ '@agent_state': '' }))).toEqual({ ok: true, stamp: null });
    expect(decodeStamp(full({ '@agent_state': undefined }))).toEqual({ ok: true, stamp: null });
  });

  it('defaults absent fields: capture source, zero clocks, no notify, no hash, pid 0', () => {
    expect(decoded({ '@agent_state': 'idle' })).toEqual({
      state: 'idle',
      detail: null,
      source: 'capture',
      evidenceAt: 0,
      since: 0,
      stampedAt: 0,
      attention: false,
      notifiedAt: null,
      turnAt: 0,
      hash: null,
      pid: 0,
      session: null,
      subagents: [],
    });
    const empties = decoded(
      full({ '@agent_detail': '', '@agent_source': '', '@agent_session': '', '@agent_subagents': '', '@agent_notified_at': '', '@agent_hash': '' }),
    );
    expect(empties.detail).toBeNull();
    expect(empties.source).toBe('capture');
    expect(empties.session).toBeNull();
    expect(empties.subagents).toEqual([]);
    expect(empties.notifiedAt).toBeNull();
    expect(empties.hash).toBeNull();
  });

  it('rejects a state outside the closed set, naming it', () => {
    expect(problem(full({ '@agent_state': 'spinning' }))).toBe('unknown @agent_state token: "spinning"');
    expect(problem(full({ '@agent_state': 'Idle' }))).toBe('unknown @agent_state token: "Idle"');
  });

  it('rejects an unknown source but reads legacy activity', () => {
    expect(problem(full({ '@agent_source': 'agent-status' }))).toBe('unknown @agent_source token: "agent-status"');
    expect(decoded(full({ '@agent_source': 'activity' })).source).toBe('activity');
    expect(decoded(full({ '@agent_source': 'process' })).source).toBe('process');
  });

  it('lets an unknown detail token round-trip', () => {
    expect(decoded(full({ '@agent_detail': 'frobnicating' })).detail).toBe('frobnicating');
  });

  it.each(['@agent_evidence_at', '@agent_since', '@agent_stamped_at', '@agent_notified_at', '@agent_turn_at', '@agent_hash', '@agent_pid'])(
    'rejects a non-numeric %s',
    (key) => {
      for (const bad of ['abc', '12a', '-5', '1.5', ' 12']) {
        expect(problem(full({ [key]: bad }))).toBe(`non-numeric ${key}: ${JSON.stringify(bad)}`);
      }
    },
  );

  it('bounds pid to u32 and hash to u64', () => {
    expect(decoded(full({ '@agent_pid': '4294967295' })).pid).toBe(4294967295);
    expect(problem(full({ '@agent_pid': '4294967296' }))).toMatch(/@agent_pid out of range/);
    expect(decoded(full({ '@agent_hash': '18446744073709551615' })).hash).toBe(0xffffffffffffffffn);
    expect(problem(full({ '@agent_hash': '18446744073709551616' }))).toMatch(/@agent_hash out of range/);
  });

  it('scales legacy seconds on every clock just under 10^12 and not at it', () => {
    const keys = {
      '@agent_evidence_at': 'evidenceAt',
      '@agent_since': 'since',
      '@agent_stamped_at': 'stampedAt',
      '@agent_notified_at': 'notifiedAt',
      '@agent_turn_at': 'turnAt',
    } as const;
    for (const [key, field] of Object.entries(keys)) {
      expect(decoded(full({ [key]: '999999999999' }))[field]).toBe(999_999_999_999_000);
      expect(decoded(full({ [key]: '1000000000000' }))[field]).toBe(1_000_000_000_000);
      expect(decoded(full({ [key]: '1000000000001' }))[field]).toBe(1_000_000_000_001);
      expect(decoded(full({ [key]: '1700000000' }))[field]).toBe(1_700_000_000_000);
      expect(decoded(full({ [key]: '0' }))[field]).toBe(0);
    }
  });

  it('never scales pid or hash', () => {
    const s = decoded(full({ '@agent_pid': '1234', '@agent_hash': '5' }));
    expect(s.pid).toBe(1234);
    expect(s.hash).toBe(5n);
  });

  it('sets attention only for the literal 1', () => {
    expect(decoded(full({ '@agent_attention': '1' })).attention).toBe(true);
    for (const v of ['0', 'true', '11', ' 1', '', undefined]) {
      expect(decoded(full({ '@agent_attention': v })).attention).toBe(false);
    }
  });
});

function s(since: number, stampedAt: number, evidenceAt = since, turnAt = 0) {
  return { since, stampedAt, evidenceAt, turnAt };
}

describe('read consistency', () => {
  it('pins the clock-step skew at 2000 ms', () => {
    expect(CLOCK_STEP_SKEW_MS).toBe(2000);
  });

  it('calls a since more than 2000 ms ahead of the stamp a clock step, and not at 2000', () => {
    expect(isClockStepped(s(T + 1999, T))).toBe(false);
    expect(isClockStepped(s(T + 2000, T))).toBe(false);
    expect(isClockStepped(s(T + 2001, T))).toBe(true);
  });

  it('is in progress when the stamp predates since or evidence_at', () => {
    expect(isInProgress(s(T, T))).toBe(false);
    expect(isInProgress(s(T, T + 1))).toBe(false);
    expect(isInProgress(s(T + 1, T))).toBe(true);
    expect(isInProgress(s(T - 5, T, T))).toBe(false);
    expect(isInProgress(s(T - 5, T, T + 1))).toBe(true);
    expect(isInProgress(s(T - 5, T, T - 1))).toBe(false);
  });

  it('reads a clock-stepped tuple as settled', () => {
    expect(isInProgress(s(T + 2000, T))).toBe(true);
    expect(isInProgress(s(T + 2001, T))).toBe(false);
    expect(isInProgress(s(T + 2001, T, T + 5000))).toBe(false);
  });

  it('takes the episode instant as the later of since and turn_at', () => {
    expect(episodeAt(s(T, T, T, 0))).toBe(T);
    expect(episodeAt(s(T, T, T, T + 1))).toBe(T + 1);
    expect(episodeAt(s(T + 1, T, T, T))).toBe(T + 1);
  });
});

describe('writableDetail', () => {
  it('keeps tokens and blanks none', () => {
    expect(writableDetail(null)).toBe('');
    expect(writableDetail('rate_limit')).toBe('rate_limit');
    expect(writableDetail('tool-use')).toBe('tool-use');
  });

  it.each(['a#b', 'a{b', 'a}b', 'a,b', 'a b', 'a\tb', 'a\nb', 'a\u0000b', 'a\u007fb', 'a\u0085b', 'a\u00a0b'])(
    'blanks a detail that would break a conditional format: %j',
    (d) => {
      expect(writableDetail(d)).toBe('');
    },
  );
});
