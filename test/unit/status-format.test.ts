import { describe, expect, it } from 'vitest';
import { countRows, statusJson, statusPlain, statusProm, statusTmux, type CountableRow } from '../../shared/status-format.js';

const NOW = 1_790_000_100_000;
const row = (pane: string, state: CountableRow['state'], attention = false, since = NOW - 42_000): CountableRow => ({
  pane,
  agent: 'claude',
  state,
  attention,
  since_ms: since,
  host: 'h"1',
  server: '/tmp/s',
});

describe('status formats', () => {
  const rows = [row('%1', 'blocked'), row('%2', 'working'), row('%3', 'working'), row('%4', 'idle', true), row('%5', 'idle')];

  it('counts disjoint classes: done is not idle', () => {
    expect(countRows(rows)).toEqual({ blocked: 1, working: 2, done: 1, idle: 1, unknown: 0 });
  });

  it('tmux: clickable ranges in fixed order, zero classes left out, each reset after, no newline', () => {
    expect(statusTmux(countRows(rows))).toBe(
      '#[range=user|tma:blocked]#[fg=colour88]⚑1#[norange]#[default] #[range=user|tma:working]#[fg=colour18]●2#[norange]#[default] ' +
        '#[range=user|tma:done]#[fg=colour90]✓1#[norange]#[default] #[range=user|tma:idle]#[fg=colour22]○1#[norange]#[default]',
    );
    expect(statusTmux(countRows([]))).toBe('');
  });

  it('plain: glyph and count, one line with its newline', () => {
    expect(statusPlain(countRows(rows))).toBe('⚑1 ●2 ✓1 ○1\n');
    expect(statusPlain(countRows([]))).toBe('\n');
  });

  it('json: all five keys in the pinned order, with a newline', () => {
    const text = statusJson(countRows(rows));
    expect(text.endsWith('\n')).toBe(true);
    const doc = JSON.parse(text);
    expect(Object.keys(doc)).toEqual(['schema', 'counts', 'context_max']);
    expect(Object.keys(doc.counts)).toEqual(['working', 'blocked', 'idle', 'unknown', 'done']);
    expect(doc.counts).toEqual({ working: 2, blocked: 1, idle: 1, unknown: 0, done: 1 });
    expect(doc.context_max).toBeNull();
  });

  it('json: context_max is the fullest reported context window, absent readings ignored', () => {
    const withContext = [
      { ...row('%1', 'idle'), context: 43 },
      { ...row('%2', 'working'), context: 81 },
      { ...row('%3', 'idle'), context: null },
    ];
    expect(JSON.parse(statusJson(countRows(withContext), withContext)).context_max).toBe(81);
  });

  it('prom: totals for every class, then seconds in state with three decimals', () => {
    const text = statusProm([row('%1', 'blocked'), row('%4', 'idle', true, NOW + 5000), row('%6', 'unknown', false, 0)], NOW);
    expect(text).toContain('tma_agents{state="working"} 0\n');
    expect(text).toContain('tma_agents{state="done"} 1\n');
    expect(text).toContain('tma_agent_state_seconds{pane="%1",agent="claude",state="blocked"} 42.000\n');
    // A since in the future, or never set, reads 0 rather than a negative age.
    expect(text).toContain('tma_agent_state_seconds{pane="%4",agent="claude",state="done"} 0.000\n');
    expect(text).toContain('tma_agent_state_seconds{pane="%6",agent="claude",state="unknown"} 0.000\n');
  });

  it('prom with origin labels escapes quotes', () => {
    expect(statusProm([row('%1', 'blocked')], NOW, true)).toContain('{host="h\\"1",server="/tmp/s",pane="%1"');
  });
});
