import { describe, expect, it } from 'vitest';
import { protocolRowSchema } from '../../shared/row-schema.js';
import { PROTOCOL_ROW_KEYS, ROW_KEYS, localRowObject, protocolRowObject, rowsDocument, type AgentRow } from '../../shared/row.js';

export function sampleRow(over: Partial<AgentRow> = {}): AgentRow {
  return {
    pane: '%3',
    agent: 'claude',
    state: 'idle',
    detail: null,
    since: 1_700_000_000_000,
    since_ms: 1_700_000_000_000,
    episode_ms: 1_700_000_000_000,
    locator: 'main:1.0',
    title: '✳ hello',
    attention: true,
    done: true,
    session: 'abc',
    transcript: null,
    permission_request: null,
    stamped_at_ms: 1_700_000_000_500,
    context: null,
    context_at_ms: null,
    muted: false,
    tokens: null,
    quota: null,
    cost_usd: null,
    repo: null,
    branch: null,
    worktree: null,
    pending_tool: null,
    pending_call: null,
    pending_summary: null,
    server: '/tmp/tmux-0/default',
    host: 'box',
    ...over,
  };
}

describe('agent row key sets', () => {
  it('local row keys, exact and in order', () => {
    expect(Object.keys(localRowObject(sampleRow()))).toEqual([
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
    ]);
    expect(ROW_KEYS).toHaveLength(30);
  });

  it('protocol row is the local row minus title, nothing else', () => {
    const p = protocolRowObject(sampleRow());
    expect(Object.keys(p)).toEqual(ROW_KEYS.filter((k) => k !== 'title'));
    expect(PROTOCOL_ROW_KEYS).not.toContain('title');
    expect(JSON.stringify(p)).not.toContain('hello');
  });

  it('nullable keys are present as null, never dropped', () => {
    const json = JSON.stringify(localRowObject(sampleRow()));
    expect(json).toContain('"detail":null');
    expect(json).toContain('"worktree":null');
    expect(json).toContain('"pending_summary":null');
  });

  it('rows document puts schema first', () => {
    const doc = rowsDocument([localRowObject(sampleRow())]);
    expect(Object.keys(doc)).toEqual(['schema', 'agents']);
    expect(doc.schema).toBe(1);
  });

  it('the protocol schema refuses a row carrying a title and accepts a clean one', () => {
    expect(protocolRowSchema.safeParse(protocolRowObject(sampleRow())).success).toBe(true);
    expect(protocolRowSchema.safeParse(localRowObject(sampleRow())).success).toBe(false);
    expect(protocolRowSchema.safeParse({ ...protocolRowObject(sampleRow()), state: 'spinning' }).success).toBe(false);
  });

  it('an unknown additive key from a newer writer passes through the schema', () => {
    const r = protocolRowSchema.parse({ ...protocolRowObject(sampleRow()), future_key: 7 });
    expect((r as Record<string, unknown>).future_key).toBe(7);
  });
});
