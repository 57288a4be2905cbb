// What hook payloads say is pending: Claude/Gemini/Codex tool calls, Cursor's shell hook and
// OpenCode's permission events, and when a hook clears it.

import { describe, expect, it } from 'vitest';
import { pendingFromPayload, pendingUpdate } from '../../collector/core/pending-hook.js';

describe('pendingFromPayload', () => {
  it('Claude PreToolUse: tool, input as JSON, one-line summary', () => {
    const p = pendingFromPayload(
      JSON.stringify({ session_id: 's', tool_name: 'Bash', tool_input: { command: 'rm -rf build/.cache\necho done', description: 'x' } }),
    );
    expect(p).toEqual({
      tool: 'Bash',
      call: '{"command":"rm -rf build/.cache\\necho done","description":"x"}',
      summary: 'Bash: rm -rf build/.cache echo done',
    });
  });

  it('a file tool is summarised by its path; a tool without input by its name', () => {
    expect(pendingFromPayload('{"tool_name":"Edit","tool_input":{"file_path":"src/a.ts","old_string":"a"}}')?.summary).toBe('Edit: src/a.ts');
    expect(pendingFromPayload('{"tool_name":"TodoWrite"}')).toEqual({ tool: 'TodoWrite', call: null, summary: 'TodoWrite' });
  });

  it('Cursor beforeShellExecution carries only the command', () => {
    expect(pendingFromPayload('{"command":"curl -sI https://example.com","cwd":"/x"}')).toEqual({
      tool: 'shell',
      call: '{"command":"curl -sI https://example.com"}',
      summary: 'shell: curl -sI https://example.com',
    });
  });

  it('OpenCode permission events nest the request under properties', () => {
    const p = pendingFromPayload(JSON.stringify({ type: 'permission.updated', properties: { id: 'per_1', type: 'edit', title: 'Edit src/config/loader.ts' } }));
    expect(p).toMatchObject({ tool: 'edit', summary: 'edit: Edit src/config/loader.ts' });
  });

  it('control characters never survive, and a long summary is cut to 200', () => {
    const p = pendingFromPayload(JSON.stringify({ tool_name: 'Bash', tool_input: { command: `\u001b[31mred\u0007 ${'x'.repeat(400)}` } }))!;
    expect(p.summary).not.toMatch(/[\u0000-\u001f\u007f]/);
    expect([...p.summary!].length).toBe(200);
    expect(p.call).not.toMatch(/[\u0000-\u001f\u007f]/);
  });

  it('no tool, no JSON object: nothing', () => {
    expect(pendingFromPayload('{"session_id":"s","message":"Claude needs your permission"}')).toBeNull();
    expect(pendingFromPayload('not json')).toBeNull();
    expect(pendingFromPayload('{"tool_name":"bad\\nname"}')).toBeNull();
  });
});

describe('pendingUpdate', () => {
  const bash = '{"tool_name":"Bash","tool_input":{"command":"ls"}}';
  it('a pre-tool or blocked event that names a tool sets it; a blocked one without keeps it', () => {
    expect(pendingUpdate('PreToolUse', 'working', bash).kind).toBe('set');
    expect(pendingUpdate('Notification', 'blocked', bash).kind).toBe('set');
    expect(pendingUpdate('Notification', 'blocked', '{"message":"needs permission"}').kind).toBe('none');
  });
  it('the end of a tool call, a new prompt or the end of a turn clears it; no stamp leaves it', () => {
    expect(pendingUpdate('PostToolUse', 'working', bash).kind).toBe('clear');
    expect(pendingUpdate('UserPromptSubmit', 'working', '{}').kind).toBe('clear');
    expect(pendingUpdate('Stop', 'idle', '{}').kind).toBe('clear');
    expect(pendingUpdate('SessionStart', null, bash).kind).toBe('none');
  });
});
