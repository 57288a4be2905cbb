// The context gauge's writes: one chain under its own marker, written last.

import { describe, expect, it } from 'vitest';
import { renderContextChain, renderUsageChain } from '../../collector/core/stamp-render.js';

describe('renderContextChain', () => {
  it('guards every value on the stored marker being strictly newer, marker last', () => {
    const cmds = renderContextChain('%3', { pct: 60, tokens: null, at: 200 }, { guarded: true, storedAt: null });
    const s = '#{e|>:#{@agent_context_at},200}';
    expect(cmds).toEqual([
      ['set-option', '-p', '-F', '-t', '%3', '@agent_context_pct', `#{?${s},#{@agent_context_pct},60}`],
      ['set-option', '-p', '-F', '-t', '%3', '@agent_tokens', `#{?${s},#{@agent_tokens},}`],
      ['set-option', '-p', '-F', '-t', '%3', '@agent_tokens_at', `#{?${s},#{@agent_tokens_at},}`],
      ['set-option', '-p', '-F', '-t', '%3', '@agent_context_at', `#{?${s},#{@agent_context_at},200}`],
    ]);
  });
  it('a clear still advances the marker; tokens_at follows tokens', () => {
    const clear = renderContextChain('%1', { pct: null, tokens: null, at: 5 }, { guarded: true, storedAt: null });
    expect(clear[0]![6]).toBe('#{?#{e|>:#{@agent_context_at},5},#{@agent_context_pct},}');
    expect(clear[3]![6]).toMatch(/,5}$/);
    const full = renderContextChain('%1', { pct: 78, tokens: 156000, at: 9 }, { guarded: true, storedAt: null });
    expect(full[1]![6]).toMatch(/,156000}$/);
    expect(full[2]![6]).toMatch(/,9}$/);
  });
  it('without -F: drops an older reading, else plain sets and unsets, marker last', () => {
    expect(renderContextChain('%1', { pct: 40, tokens: 80000, at: 100 }, { guarded: false, storedAt: 200 })).toEqual([]);
    expect(renderContextChain('%1', { pct: 60, tokens: null, at: 200 }, { guarded: false, storedAt: 200 })).toEqual([
      ['set-option', '-p', '-t', '%1', '@agent_context_pct', '60'],
      ['set-option', '-p', '-u', '-t', '%1', '@agent_tokens'],
      ['set-option', '-p', '-u', '-t', '%1', '@agent_tokens_at'],
      ['set-option', '-p', '-t', '%1', '@agent_context_at', '200'],
    ]);
  });
});

describe('renderUsageChain', () => {
  it('writes only what the payload carried, under its own marker, last', () => {
    const cmds = renderUsageChain('%2', { costUsd: 4.05, quota: { pct: 61, window: 'seven_day', resetsAt: 9 }, at: 50 }, { guarded: true, storedAt: null });
    const s = '#{e|>:#{@agent_quota_at},50}';
    expect(cmds.map((c) => c[5])).toEqual(['@agent_quota_pct', '@agent_quota_window', '@agent_quota_resets_at', '@agent_cost_usd', '@agent_quota_at']);
    expect(cmds[0]![6]).toBe(`#{?${s},#{@agent_quota_pct},61}`);
    expect(renderUsageChain('%2', { costUsd: 1.5, quota: null, at: 50 }, { guarded: true, storedAt: null }).map((c) => c[5])).toEqual([
      '@agent_cost_usd',
      '@agent_quota_at',
    ]);
    expect(renderUsageChain('%2', { costUsd: null, quota: null, at: 50 }, { guarded: true, storedAt: null })).toEqual([]);
    expect(renderUsageChain('%2', { costUsd: 1, quota: null, at: 50 }, { guarded: false, storedAt: 60 })).toEqual([]);
  });
});
