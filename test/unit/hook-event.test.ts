import { describe, expect, it } from 'vitest';
import {
  eventSentAt,
  compileMatcher,
  decideEvent,
  eventSession,
  mapEvent,
  notifiedAtFor,
  permissionRequestUpdate,
  registerExtras,
  type DecideInput,
  type EventDecision,
  type MappedEvent,
} from '../../collector/core/hook-event.js';
import type { AgentManifest, HookMapEntry, StampedState } from '../../collector/core/types.js';

function manifest(map: HookMapEntry[] | null): AgentManifest {
  return {
    name: 'agent',
    path: '<test>',
    bundled: false,
    minEngineVersion: '0.4',
    identity: { processNames: ['agent'], titlePatterns: [] },
    hooks: map === null ? null : { covers: [], map },
    capture: { visible: [] },
    rules: [],
    details: {},
    telemetry: { context: null },
  };
}

const state = (event: string, st: 'idle' | 'working' | 'blocked', extra: Partial<HookMapEntry> = {}): HookMapEntry => ({
  event,
  matcher: null,
  claim: { kind: 'state', state: st, detail: st === 'blocked' ? 'permission' : null },
  turnEnd: false,
  ...extra,
});
const lifecycle = (event: string, phase: 'start' | 'end'): HookMapEntry => ({
  event,
  matcher: null,
  claim: { kind: 'lifecycle', phase },
  turnEnd: false,
});

const NOW = 1_700_000_000_000;

function stored(over: Partial<StampedState> = {}): StampedState {
  return {
    state: 'working',
    detail: null,
    source: 'hook',
    evidenceAt: NOW - 5000,
    since: NOW - 5000,
    stampedAt: NOW - 5000,
    attention: false,
    notifiedAt: null,
    turnAt: 0,
    hash: null,
    pid: 42,
    session: 'owner',
    subagents: [],
    ...over,
  };
}

describe('eventSession', () => {
  it('reads a plain value', () => {
    expect(eventSession('{"session_id":"abc-123","x":1}')).toBe('abc-123');
    expect(eventSession('{ "session_id" :\n "abc" }')).toBe('abc');
  });

  it('decodes \\n and \\t and keeps X for any other \\X', () => {
    expect(eventSession(String.raw`{"session_id":"a\nb\tc\"d\\e\/f\qg"}`)).toBe('a\nb\tc"d\\e/fqg');
  });

  it('takes the first occurrence anywhere, nested or not', () => {
    expect(eventSession('{"tool":{"session_id":"inner"},"session_id":"outer"}')).toBe('inner');
  });

  it('passes over a "session_id" that is a value rather than a key', () => {
    expect(eventSession('{"field":"session_id","session_id":"real"}')).toBe('real');
  });

  it('does not see a key inside an escaped string', () => {
    expect(eventSession(String.raw`{"cmd":"echo \"session_id\": \"fake\""}`)).toBeNull();
  });

  it('returns the empty string for ""', () => {
    expect(eventSession('{"session_id":""}')).toBe('');
  });

  it('is null for a non-string first key, even when a later one is a string', () => {
    expect(eventSession('{"session_id":null,"a":{"session_id":"later"}}')).toBeNull();
    expect(eventSession('{"session_id":42}')).toBeNull();
  });

  it('is null when absent, unterminated, or the input is empty', () => {
    expect(eventSession('{"type":"agent-turn-complete"}')).toBeNull();
    expect(eventSession('{"session_id":"abc')).toBeNull();
    expect(eventSession('{"session_id":"abc\\')).toBeNull();
    expect(eventSession('')).toBeNull();
  });
});

describe('compileMatcher', () => {
  it('compiles Rust-style code points and inline flags', () => {
    expect(compileMatcher(String.raw`[\x{2800}-\x{28FF}]`)?.test('⠙ working')).toBe(true);
    expect(compileMatcher(String.raw`[\x{2800}-\x{28FF}]`)?.test('plain')).toBe(false);
    expect(compileMatcher('(?i)permission')?.test('PERMISSION')).toBe(true);
  });

  it('leaves an escaped backslash before x{ alone', () => {
    expect(compileMatcher(String.raw`\\x\{41\}`)?.test(String.raw`\x{41}`)).toBe(true);
  });

  it('is null for a pattern JavaScript rejects', () => {
    expect(compileMatcher('(unclosed')).toBeNull();
  });
});

describe('mapEvent', () => {
  const claude = manifest([
    lifecycle('SessionStart', 'start'),
    lifecycle('SessionEnd', 'end'),
    state('PreToolUse', 'working'),
    state('Notification', 'blocked', { matcher: 'permission_prompt|elicitation_dialog' }),
    state('Stop', 'idle', { turnEnd: true }),
  ]);

  it('maps subagent bookkeeping for any agent, even one without hooks', () => {
    expect(mapEvent(manifest(null), 'SubagentStart', '')).toEqual({ kind: 'subagent-start' });
    expect(mapEvent(manifest(null), 'SubagentStop', '')).toEqual({ kind: 'subagent-stop' });
  });

  it('is unmapped without hooks or without an entry for the event', () => {
    expect(mapEvent(manifest(null), 'Stop', '{}')).toEqual({ kind: 'unmapped' });
    expect(mapEvent(claude, 'BeforeModel', '{}')).toEqual({ kind: 'unmapped' });
  });

  it('maps lifecycle claims to register and deregister', () => {
    expect(mapEvent(claude, 'SessionStart', '{}')).toEqual({ kind: 'register' });
    expect(mapEvent(claude, 'SessionEnd', '{}')).toEqual({ kind: 'deregister' });
  });

  it('carries state, detail and turn_end', () => {
    expect(mapEvent(claude, 'Stop', '{}')).toEqual({ kind: 'state', state: 'idle', detail: null, turnEnd: true });
    expect(mapEvent(claude, 'PreToolUse', '{}')).toEqual({ kind: 'state', state: 'working', detail: null, turnEnd: false });
  });

  it('maps a matcher-only event only when the matcher matches the raw payload', () => {
    expect(mapEvent(claude, 'Notification', '{"notification_type":"permission_prompt"}')).toEqual({
      kind: 'state',
      state: 'blocked',
      detail: 'permission',
      turnEnd: false,
    });
    expect(mapEvent(claude, 'Notification', '{"notification_type":"idle_prompt"}')).toEqual({ kind: 'unmapped' });
  });

  it('lets a later matching entry beat an earlier matcher-less fallback', () => {
    const m = manifest([state('E', 'working'), state('E', 'blocked', { matcher: 'ask' }), state('E', 'idle')]);
    expect((mapEvent(m, 'E', '{"ask":1}') as { state: string }).state).toBe('blocked');
    expect((mapEvent(m, 'E', '{}') as { state: string }).state).toBe('working');
  });

  it('takes the first matching matcher', () => {
    const m = manifest([state('E', 'blocked', { matcher: 'a' }), state('E', 'idle', { matcher: 'a' })]);
    expect((mapEvent(m, 'E', 'a') as { state: string }).state).toBe('blocked');
  });

  it('never matches with a bad matcher and falls through to the next entry', () => {
    const m = manifest([state('E', 'blocked', { matcher: '(' }), state('E', 'idle', { matcher: '\\(' })]);
    expect((mapEvent(m, 'E', '(') as { state: string }).state).toBe('idle');
    expect(mapEvent(manifest([state('E', 'blocked', { matcher: '[' })]), 'E', '[')).toEqual({ kind: 'unmapped' });
  });

  it('matches the codex turn-complete fallback with its payload regex', () => {
    const codex = manifest([state('notify', 'idle', { matcher: 'agent-turn-complete', turnEnd: true })]);
    expect(mapEvent(codex, 'notify', '{"type":"agent-turn-complete"}')).toEqual({
      kind: 'state',
      state: 'idle',
      detail: null,
      turnEnd: true,
    });
  });
});

const NOTIFY_OFF = { fromEvent: false, on: ['blocked', 'done'] as ('blocked' | 'done')[] };
const idleTurnEnd: MappedEvent = { kind: 'state', state: 'idle', detail: null, turnEnd: true };
const idlePlain: MappedEvent = { kind: 'state', state: 'idle', detail: null, turnEnd: false };
const blocked: MappedEvent = { kind: 'state', state: 'blocked', detail: 'permission', turnEnd: false };
const working: MappedEvent = { kind: 'state', state: 'working', detail: null, turnEnd: false };

function decide(over: Partial<DecideInput>): EventDecision {
  return decideEvent({ mapped: working, stored: stored(), eventSession: 'owner', now: NOW, notify: NOTIFY_OFF, ...over });
}

function stamp(d: EventDecision) {
  if (d.kind !== 'stamp') throw new Error(`expected a stamp, got ${d.kind}`);
  return d;
}

describe('decideEvent: subagents', () => {
  it('adds the event session to the stored list without duplicates, regardless of owner', () => {
    const s = stored({ subagents: ['a'] });
    expect(decide({ mapped: { kind: 'subagent-start' }, stored: s, eventSession: 'b' })).toEqual({ kind: 'subagents', list: ['a', 'b'] });
    expect(decide({ mapped: { kind: 'subagent-start' }, stored: s, eventSession: 'a' })).toEqual({ kind: 'subagents', list: ['a'] });
    expect(decide({ mapped: { kind: 'subagent-start' }, stored: null, eventSession: 'a' })).toEqual({ kind: 'subagents', list: ['a'] });
  });

  it('removes it on stop, down to an empty list', () => {
    const s = stored({ subagents: ['a', 'b'] });
    expect(decide({ mapped: { kind: 'subagent-stop' }, stored: s, eventSession: 'a' })).toEqual({ kind: 'subagents', list: ['b'] });
    expect(decide({ mapped: { kind: 'subagent-stop' }, stored: stored({ subagents: ['a'] }), eventSession: 'a' })).toEqual({
      kind: 'subagents',
      list: [],
    });
  });

  it('does nothing without a session to add or remove', () => {
    expect(decide({ mapped: { kind: 'subagent-start' }, eventSession: null })).toEqual({ kind: 'nothing' });
    expect(decide({ mapped: { kind: 'subagent-stop' }, eventSession: '' })).toEqual({ kind: 'nothing' });
  });
});

describe('decideEvent: the subagent guard', () => {
  const busy = stored({ subagents: ['child'], session: 'owner' });

  it('lets the owner session through while subagents run', () => {
    expect(decide({ stored: busy, eventSession: 'owner' }).kind).toBe('stamp');
  });

  it('ignores other sessions, missing sessions and a missing owner', () => {
    expect(decide({ stored: busy, eventSession: 'child' })).toEqual({ kind: 'ignore' });
    expect(decide({ stored: busy, eventSession: null })).toEqual({ kind: 'ignore' });
    expect(decide({ stored: stored({ subagents: ['child'], session: null }), eventSession: 'owner' })).toEqual({ kind: 'ignore' });
  });

  it('guards lifecycle events too', () => {
    expect(decide({ mapped: { kind: 'deregister' }, stored: busy, eventSession: 'child' })).toEqual({ kind: 'ignore' });
    expect(decide({ mapped: { kind: 'register' }, stored: busy, eventSession: 'child' })).toEqual({ kind: 'ignore' });
  });

  it('does not apply without subagents', () => {
    expect(decide({ stored: stored({ session: 'owner' }), eventSession: 'stranger' }).kind).toBe('stamp');
  });

  it('runs after the unmapped check', () => {
    expect(decide({ mapped: { kind: 'unmapped' }, stored: busy, eventSession: 'child' })).toEqual({ kind: 'nothing' });
  });
});

describe('decideEvent: lifecycle', () => {
  it('removes on deregister', () => {
    expect(decide({ mapped: { kind: 'deregister' } })).toEqual({ kind: 'remove' });
  });

  it('stamps idle on register, overwriting the owner session, with no attention, turn or notify', () => {
    const d = decide({
      mapped: { kind: 'register' },
      stored: stored({ state: 'working', attention: true, session: 'old' }),
      eventSession: 'new',
      notify: { fromEvent: true, on: ['blocked', 'done'] },
    });
    expect(d).toEqual({
      kind: 'stamp',
      state: 'idle',
      detail: null,
      attention: false,
      registerSession: 'new',
      recordTurn: false,
      notify: null,
      register: true,
    });
  });
});

describe('decideEvent: attention', () => {
  const att = (mapped: MappedEvent, s: StampedState | null) => stamp(decide({ mapped, stored: s })).attention;

  it('raises on entering blocked, not while staying blocked', () => {
    expect(att(blocked, stored({ state: 'working' }))).toBe(true);
    expect(att(blocked, stored({ state: 'idle' }))).toBe(true);
    expect(att(blocked, null)).toBe(true);
    expect(att(blocked, stored({ state: 'blocked' }))).toBe(false);
  });

  it('raises on working -> idle, with or without a turn end', () => {
    expect(att(idlePlain, stored({ state: 'working' }))).toBe(true);
    expect(att(idleTurnEnd, stored({ state: 'working', attention: true }))).toBe(true);
  });

  it('raises on idle -> idle with a turn end and no standing mark', () => {
    expect(att(idleTurnEnd, stored({ state: 'idle', attention: false }))).toBe(true);
    expect(att(idleTurnEnd, null)).toBe(true);
  });

  it('does not raise again on idle -> idle when the mark is standing', () => {
    expect(att(idleTurnEnd, stored({ state: 'idle', attention: true }))).toBe(false);
  });

  it('does not raise on idle without a turn end unless leaving working', () => {
    expect(att(idlePlain, stored({ state: 'idle' }))).toBe(false);
    expect(att(idlePlain, stored({ state: 'blocked' }))).toBe(false);
    expect(att(idlePlain, null)).toBe(false);
  });

  it('never raises for working', () => {
    expect(att(working, stored({ state: 'idle' }))).toBe(false);
    expect(att(working, stored({ state: 'blocked' }))).toBe(false);
  });
});

describe('decideEvent: record_turn and session ownership', () => {
  it('records a turn only for a raised idle turn end', () => {
    expect(stamp(decide({ mapped: idleTurnEnd, stored: stored({ state: 'working' }) })).recordTurn).toBe(true);
    expect(stamp(decide({ mapped: idleTurnEnd, stored: stored({ state: 'idle', attention: true }) })).recordTurn).toBe(false);
    expect(stamp(decide({ mapped: idlePlain, stored: stored({ state: 'working' }) })).recordTurn).toBe(false);
    expect(stamp(decide({ mapped: blocked, stored: stored({ state: 'working' }) })).recordTurn).toBe(false);
  });

  it('registers the event session only when the pane has no owner yet', () => {
    expect(stamp(decide({ stored: stored({ session: null }), eventSession: 's1' })).registerSession).toBe('s1');
    expect(stamp(decide({ stored: null, eventSession: 's1' })).registerSession).toBe('s1');
    expect(stamp(decide({ stored: null, eventSession: '' })).registerSession).toBe('');
    expect(stamp(decide({ stored: stored({ session: 'owner' }), eventSession: 's1' })).registerSession).toBeNull();
    expect(stamp(decide({ stored: stored({ session: null }), eventSession: null })).registerSession).toBeNull();
  });

  it('carries the mapped state and detail', () => {
    const d = stamp(decide({ mapped: blocked }));
    expect([d.state, d.detail, d.register]).toEqual(['blocked', 'permission', false]);
  });
});

describe('decideEvent: notify gating', () => {
  const ON = { fromEvent: true, on: ['blocked'] as ('blocked' | 'done')[] };
  const notifyOf = (over: Partial<DecideInput>) => stamp(decide({ notify: ON, ...over })).notify;

  it('fires blocked on a blocked raise when opted in', () => {
    expect(notifyOf({ mapped: blocked })).toBe('blocked');
  });

  it('stays silent without the opt-in', () => {
    expect(notifyOf({ mapped: blocked, notify: { fromEvent: false, on: ['blocked'] } })).toBeNull();
  });

  it('fires done only when done is enabled (the default list holds only blocked)', () => {
    expect(notifyOf({ mapped: idleTurnEnd })).toBeNull();
    expect(notifyOf({ mapped: idleTurnEnd, notify: { fromEvent: true, on: ['done'] } })).toBe('done');
    expect(notifyOf({ mapped: blocked, notify: { fromEvent: true, on: ['done'] } })).toBeNull();
  });

  it('stays silent without a raise', () => {
    expect(notifyOf({ mapped: blocked, stored: stored({ state: 'blocked' }) })).toBeNull();
    expect(notifyOf({ mapped: working, notify: { fromEvent: true, on: ['blocked', 'done'] } })).toBeNull();
  });

  it('is suppressed when notified_at is at or after now, and allowed just before', () => {
    expect(notifyOf({ mapped: blocked, stored: stored({ notifiedAt: NOW }) })).toBeNull();
    expect(notifyOf({ mapped: blocked, stored: stored({ notifiedAt: NOW + 1 }) })).toBeNull();
    expect(notifyOf({ mapped: blocked, stored: stored({ notifiedAt: NOW - 1 }) })).toBe('blocked');
    expect(notifyOf({ mapped: blocked, stored: stored({ notifiedAt: null }) })).toBe('blocked');
  });
});

describe('notifiedAtFor', () => {
  it('is now when the state changes or nothing is stored', () => {
    expect(notifiedAtFor(null, 'blocked', NOW)).toBe(NOW);
    expect(notifiedAtFor(stored({ state: 'working', since: NOW + 500 }), 'blocked', NOW)).toBe(NOW);
  });

  it('never precedes the stored episode when the state is unchanged', () => {
    expect(notifiedAtFor(stored({ state: 'blocked', since: NOW + 500, turnAt: 0 }), 'blocked', NOW)).toBe(NOW + 500);
    expect(notifiedAtFor(stored({ state: 'idle', since: NOW - 10, turnAt: NOW + 700 }), 'idle', NOW)).toBe(NOW + 700);
    expect(notifiedAtFor(stored({ state: 'idle', since: NOW - 10, turnAt: NOW - 5 }), 'idle', NOW)).toBe(NOW);
  });
});

describe('permissionRequestUpdate', () => {
  const toBlocked = stamp(decide({ mapped: blocked }));
  const toIdle = stamp(decide({ mapped: idleTurnEnd }));
  const toWorking = stamp(decide({ mapped: working }));
  const nothing: EventDecision = { kind: 'nothing' };

  it('clears on permission-replied unless both sessions exist and differ', () => {
    expect(permissionRequestUpdate('permission-replied', nothing, '{"session_id":"owner"}', stored())).toEqual({ kind: 'unset' });
    expect(permissionRequestUpdate('permission-replied', nothing, '{}', stored())).toEqual({ kind: 'unset' });
    expect(permissionRequestUpdate('permission-replied', nothing, '{"session_id":"x"}', stored({ session: null }))).toEqual({ kind: 'unset' });
    expect(permissionRequestUpdate('permission-replied', nothing, '{"session_id":"x"}', null)).toEqual({ kind: 'unset' });
    expect(permissionRequestUpdate('permission-replied', nothing, '{"session_id":"other"}', stored())).toEqual({ kind: 'none' });
  });

  it('a reply naming another request than the stored one leaves the stored one alone', () => {
    // OpenCode asked per_2 while the reply to per_1 was still on its way.
    expect(permissionRequestUpdate('permission-replied', nothing, '{"session_id":"owner","request_id":"per_1"}', stored(), 'per_2')).toEqual({ kind: 'none' });
    expect(permissionRequestUpdate('permission-replied', nothing, '{"session_id":"owner","request_id":"per_2"}', stored(), 'per_2')).toEqual({ kind: 'unset' });
    // A reply that names no request (an older bridge) still clears, as before.
    expect(permissionRequestUpdate('permission-replied', nothing, '{"session_id":"owner"}', stored(), 'per_2')).toEqual({ kind: 'unset' });
  });

  it('records a well-formed request id on a blocked stamp', () => {
    expect(permissionRequestUpdate('permission-required', toBlocked, '{"request_id":"per_01J:a.b-c"}', stored())).toEqual({
      kind: 'set',
      id: 'per_01J:a.b-c',
    });
  });

  it('ignores a missing, empty, non-string or unsafe request id', () => {
    for (const payload of ['{}', '{"request_id":""}', '{"request_id":7}', '{"request_id":"a b"}', '{"request_id":"a;rm"}', 'not json']) {
      expect(permissionRequestUpdate('permission-required', toBlocked, payload, stored())).toEqual({ kind: 'none' });
    }
  });

  it('caps the request id length at 256', () => {
    const at = 'a'.repeat(256);
    expect(permissionRequestUpdate('k', toBlocked, JSON.stringify({ request_id: at }), stored())).toEqual({ kind: 'set', id: at });
    expect(permissionRequestUpdate('k', toBlocked, JSON.stringify({ request_id: `${at}a` }), stored())).toEqual({ kind: 'none' });
  });

  it('only reads a top-level request id', () => {
    expect(permissionRequestUpdate('k', toBlocked, '{"x":{"request_id":"r1"}}', stored())).toEqual({ kind: 'none' });
  });

  it('clears on a stamp to working or idle, and leaves it otherwise', () => {
    expect(permissionRequestUpdate('k', toWorking, '{"request_id":"r1"}', stored())).toEqual({ kind: 'unset' });
    expect(permissionRequestUpdate('k', toIdle, '{}', stored())).toEqual({ kind: 'unset' });
    expect(permissionRequestUpdate('k', nothing, '{"request_id":"r1"}', stored())).toEqual({ kind: 'none' });
    expect(permissionRequestUpdate('k', { kind: 'ignore' }, '{"request_id":"r1"}', stored())).toEqual({ kind: 'none' });
  });
});

describe('registerExtras', () => {
  it('trims the model and keeps 1 to 64 characters', () => {
    expect(registerExtras('{"model":"  claude-opus-4  "}').model).toBe('claude-opus-4');
    expect(registerExtras(JSON.stringify({ model: 'm'.repeat(64) })).model).toBe('m'.repeat(64));
    expect(registerExtras(JSON.stringify({ model: 'm'.repeat(65) })).model).toBeNull();
    expect(registerExtras(JSON.stringify({ model: ` ${'m'.repeat(64)} ` })).model).toBe('m'.repeat(64));
    expect(registerExtras(JSON.stringify({ model: 'é'.repeat(64) })).model).toBe('é'.repeat(64));
    expect(registerExtras('{"model":"m"}').model).toBe('m');
    expect(registerExtras('{"model":"   "}').model).toBeNull();
    expect(registerExtras('{"model":""}').model).toBeNull();
  });

  it('ignores a non-string, nested or control-bearing model', () => {
    expect(registerExtras('{"model":{"id":"x"}}').model).toBeNull();
    expect(registerExtras('{"x":{"model":"m"}}').model).toBeNull();
    expect(registerExtras('{"model":"a\\nb"}').model).toBeNull();
    expect(registerExtras('garbage').model).toBeNull();
  });

  it('keeps only a plain http:// endpoint without whitespace or controls', () => {
    expect(registerExtras('{"api_endpoint":"http://127.0.0.1:4096"}').apiEndpoint).toBe('http://127.0.0.1:4096');
    expect(registerExtras('{"api_endpoint":"https://127.0.0.1:4096"}').apiEndpoint).toBeNull();
    expect(registerExtras('{"api_endpoint":"HTTP://127.0.0.1"}').apiEndpoint).toBeNull();
    expect(registerExtras('{"api_endpoint":"http://"}').apiEndpoint).toBeNull();
    expect(registerExtras('{"api_endpoint":"http://a"}').apiEndpoint).toBe('http://a');
    expect(registerExtras('{"api_endpoint":"http://a b"}').apiEndpoint).toBeNull();
    expect(registerExtras('{"api_endpoint":"http://a\\u0007"}').apiEndpoint).toBeNull();
    expect(registerExtras('{"api_endpoint":"ftp://a"}').apiEndpoint).toBeNull();
    expect(registerExtras('{"api_endpoint":5}').apiEndpoint).toBeNull();
  });
});

describe('eventSentAt', () => {
  const NOW = Date.parse('2026-12-02T01:27:58.000Z');
  it("takes the agent's own ISO timestamp (Gemini CLI's base input)", () => {
    expect(eventSentAt('{"session_id":"s","timestamp":"2026-12-02T01:27:56.076Z"}', NOW)).toBe(NOW - 1924);
  });
  it('falls back to the intake time without one, or with one it cannot believe', () => {
    for (const p of [
      '{"session_id":"s"}',
      'not json',
      '{"timestamp":1796174876076}',
      '{"timestamp":"yesterday"}',
      '{"timestamp":"2026-12-02T01:28:30.000Z"}',
      '{"timestamp":"2026-12-02T01:10:00.000Z"}',
    ]) {
      expect(eventSentAt(p, NOW), p).toBe(NOW);
    }
  });
});
