// The context lane's parsers and scan helpers, on our own samples (test/fixtures/telemetry) and
// on the spec's extra vectors.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  claudeStatusline,
  claudeUsage,
  cursorStatusline,
  parseContextEvent,
  parseTriple,
  payloadModel,
  piContext,
} from '../../collector/core/telemetry/context-report.js';
import { isRolloutFor, readRollout, tokenCountPct, wholeLines } from '../../collector/core/telemetry/rollout.js';
import { count, findNumber, findString, objectOf } from '../../collector/core/telemetry/scan.js';
import { ownsPayload } from '../../collector/engine/context-intake.js';

const sample = (name: string) => readFileSync(join(import.meta.dirname, '../fixtures/telemetry', name), 'utf8');

describe('scan helpers', () => {
  it('findString takes the first occurrence only, decodes \\n \\t and keeps other escapes literal', () => {
    expect(findString('{"a" : "x\\ny\\tz\\u00e9\\"q"}', 'a')).toBe('x\ny\tzu00e9"q');
    expect(findString('{"model":{"id":"m"},"x":{"model":"late"}}', 'model')).toBeNull();
    expect(findString('{"a":""}', 'a')).toBe('');
    expect(findString('{"a":"open', 'a')).toBeNull();
    expect(findString('{"a":1}', 'a')).toBeNull();
  });
  it('findNumber reads the run of number characters, strictly', () => {
    expect(findNumber('{"n": 42.5,"m":1}', 'n')).toBe(42.5);
    expect(findNumber('{"n":1e3}', 'n')).toBe(1000);
    expect(findNumber('{"n":null}', 'n')).toBeNull();
    expect(findNumber('{"n":"7"}', 'n')).toBeNull();
    expect(findNumber('{"n":1-2}', 'n')).toBeNull();
    expect(findNumber('{"x":1}', 'n')).toBeNull();
  });
  it('count truncates and refuses negatives', () => {
    expect(count(95000.7)).toBe(95000);
    expect(count(-1)).toBeNull();
    expect(count(null)).toBeNull();
  });
});

describe('claude statusline', () => {
  it('rounds the percentage and trusts the token count from 2.1.132 on', () => {
    expect(claudeStatusline(sample('claude-statusline.json'))).toEqual({
      session: 'a1b2c3d4-0000-4000-8000-00000000aa01',
      pct: 43,
      tokens: 85400,
    });
  });
  it('reads tokens after context_window only (a subagent line cannot leak its count)', () => {
    expect(claudeStatusline(sample('claude-statusline-subagent.json'))).toEqual({
      session: 'a1b2c3d4-0000-4000-8000-00000000bb02',
      pct: 9,
      tokens: 18000,
    });
    const tokenFirst = '{"version":"2.1.200","subagentStatusLine":{"total_input_tokens":5},"context_window":{"used_percentage":3,"total_input_tokens":6000}}';
    expect(claudeStatusline(tokenFirst)?.tokens).toBe(6000);
  });
  it('drops an out-of-range percentage instead of clearing', () => {
    expect(claudeStatusline(sample('claude-statusline-overflow.json'))).toBeNull();
    for (const p of ['-1', '100.4', '247']) expect(claudeStatusline(`{"used_percentage":${p}}`)).toBeNull();
  });
  it('clears on a payload without a percentage, including garbage', () => {
    expect(claudeStatusline('{"session_id":"s","version":"2.1.212","context_window":null}')).toEqual({ session: 's', pct: null, tokens: null });
    expect(claudeStatusline('')).toEqual({ session: null, pct: null, tokens: null });
    expect(claudeStatusline('<html>500</html>')).toEqual({ session: null, pct: null, tokens: null });
  });
  it('keeps the edges: 0 and 100', () => {
    expect(claudeStatusline('{"used_percentage":0}')?.pct).toBe(0);
    expect(claudeStatusline('{"used_percentage":100}')?.pct).toBe(100);
  });
  it('gates the token count on the version', () => {
    const withVersion = (v: string | null) =>
      claudeStatusline(`{${v === null ? '' : `"version":"${v}",`}"context_window":{"used_percentage":10,"total_input_tokens":20000}}`)?.tokens;
    for (const v of ['2.1.132', '2.2.0', '3.0.0', '2.1.132-rc.1']) expect(withVersion(v), v).toBe(20000);
    for (const v of ['2.1.131', '2.0.999', 'nightly', '2.1', null]) expect(withVersion(v), String(v)).toBeNull();
    expect(parseTriple(' 2.1.132-rc.1 ')).toEqual([2, 1, 132]);
  });
});

describe('cursor statusline', () => {
  it('computes the percentage from tokens over the window', () => {
    expect(cursorStatusline(sample('cursor-statusline.json'))).toEqual({
      session: 'c0ffee00-1111-4222-8333-444455556666',
      pct: 48,
      tokens: 95000,
    });
    expect(cursorStatusline('{"total_input_tokens":260000,"context_window_size":200000}')?.pct).toBe(100);
  });
  it('ignores (never clears) what it cannot compute', () => {
    expect(cursorStatusline('{"total_input_tokens":1000,"context_window_size":0}')).toBeNull();
    expect(cursorStatusline('{"session_id":"x"}')).toBeNull();
    expect(cursorStatusline('{"total_input_tokens":"n/a","context_window_size":"n/a"}')).toBeNull();
    expect(cursorStatusline('<html>500</html>')).toBeNull();
  });
});

describe('pi context', () => {
  it('prefers its own percentage, clamped and rounded', () => {
    expect(piContext(sample('pi-context.json'))).toEqual({ session: 'ses_ownsample01', pct: 50, tokens: 99200 });
    expect(piContext('{"context_usage":{"percent":140}}')?.pct).toBe(100);
    expect(piContext('{"context_usage":{"contextWindow":200000,"percent":30}}')).toEqual({ session: null, pct: 30, tokens: null });
    expect(piContext('{"context_usage":{"tokens":-5,"percent":0}}')).toEqual({ session: null, pct: 0, tokens: null });
  });
  it('computes from tokens and a known window, and never guesses one', () => {
    expect(piContext('{"context_usage":{"tokens":124000,"contextWindow":200000}}')?.pct).toBe(62);
    expect(piContext('{"context_usage":{"tokens":150000,"percent":null}}')).toBeNull();
    expect(piContext('{"context_usage":{"tokens":10,"contextWindow":0}}')).toBeNull();
    expect(piContext('{"context_usage":null}')).toBeNull();
    expect(piContext('{"context_usage":{"tokens":null,"contextWindow":null,"percent":null}}')).toBeNull();
  });
});

describe('codex rollout', () => {
  it('takes the last computable token count from total_token_usage, and the last model', () => {
    expect(readRollout(sample('codex-rollout.jsonl'))).toEqual({ pct: 50, model: 'gpt-5.1-codex' });
  });
  it('skips a line that is not a token count or does not compute', () => {
    expect(tokenCountPct('{"type":"token_count","info":{"total_token_usage":{"total_tokens":5}}}')).toBeNull();
    expect(tokenCountPct('{"type":"message","model_context_window":100,"total_token_usage":{"total_tokens":5}}')).toBeNull();
    expect(readRollout('{"type":"turn_context","model_context_window":1}\n')).toEqual({ pct: null, model: null });
  });
  it('keeps whole lines of a window', () => {
    expect(wholeLines('cut\nwhole\npartial', false)).toBe('whole\n');
    expect(wholeLines('first\npartial', true)).toBe('first\n');
    expect(wholeLines('no newline', false)).toBe('');
  });
  it('matches rollout files by session', () => {
    expect(isRolloutFor('rollout-2026-11-30T10-00-00-abc.jsonl', 'abc')).toBe(true);
    expect(isRolloutFor('rollout-x-abc.json', 'abc')).toBe(false);
    expect(isRolloutFor('other-abc.jsonl', 'abc')).toBe(false);
  });
});

describe('dispatch, model, ownership', () => {
  it('maps the three event formats and ignores any other id', () => {
    expect(parseContextEvent('pi-context-json', '{"context_usage":{"percent":5}}')?.pct).toBe(5);
    expect(parseContextEvent('codex-rollout-jsonl', '{"used_percentage":5}')).toBeNull();
    expect(parseContextEvent('made-up', '{"used_percentage":5}')).toBeNull();
  });
  it('reads a model label of 1..64 characters', () => {
    expect(payloadModel('{"model":" gpt-5 "}')).toBe('gpt-5');
    expect(payloadModel('{"model":""}')).toBeNull();
    expect(payloadModel(`{"model":"${'x'.repeat(65)}"}`)).toBeNull();
  });
  it('drops a payload from another session, an empty one included, only on an owned pane', () => {
    const r = (session: string | null) => ({ session, pct: 1, tokens: null });
    expect(ownsPayload('s1', r('s1'))).toBe(true);
    expect(ownsPayload('s1', r('s2'))).toBe(false);
    expect(ownsPayload('s1', r(''))).toBe(false);
    expect(ownsPayload('s1', r(null))).toBe(true);
    expect(ownsPayload(undefined, r('s2'))).toBe(true);
  });
});

describe('claude usage: cost and quota', () => {
  it('reads cost and the rate-limit window closest to running out', () => {
    expect(claudeUsage(sample('claude-statusline-limits.json'))).toEqual({
      costUsd: 4.05,
      quota: { pct: 61, window: 'seven_day', resetsAt: 1_795_400_000_000 },
    });
  });
  it('leaves what is absent absent', () => {
    expect(claudeUsage(sample('claude-statusline.json'))).toEqual({ costUsd: 1.37, quota: null });
    expect(claudeUsage('{"context_window":{"used_percentage":5}}')).toEqual({ costUsd: null, quota: null });
    expect(claudeUsage('{"rate_limits":{"five_hour":{"used_percentage":140}}}')).toEqual({ costUsd: null, quota: null });
  });
  it('a rate-limit percentage never passes for the context gauge', () => {
    expect(claudeStatusline(sample('claude-statusline-limits.json'))).toMatchObject({ pct: 12, tokens: 24000 });
    // context_window null but rate_limits present: still a clear, not 23.
    const r = claudeStatusline('{"version":"2.1.150","rate_limits":{"five_hour":{"used_percentage":23}},"context_window":null}');
    expect(r).toEqual({ session: null, pct: null, tokens: null });
  });
  it('objectOf bounds an object, strings and nesting included', () => {
    expect(objectOf('{"a":{"b":"}{","c":{"d":1}},"e":2}', 'a')).toBe('{"b":"}{","c":{"d":1}}');
    expect(objectOf('{"a":null}', 'a')).toBeNull();
    expect(objectOf('{"a":{"b":1', 'a')).toBeNull();
    expect(objectOf('{}', 'a')).toBeUndefined();
  });
});
