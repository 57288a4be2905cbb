import { describe, expect, it } from 'vitest';
import { actionsByAgent } from '../../collector/fleet/actions-by-agent.js';
import type { ActionManifest } from '../../collector/core/action-manifest.js';
import { loadActions } from '../../collector/manifest-files.js';

describe('actions by agent', () => {
  it('maps the bundled actions to the agents they can reach, and only the allowed ones', () => {
    const set = loadActions({ env: { XDG_CONFIG_HOME: '/nonexistent-tma-test' } });
    if (!set.ok) throw new Error(JSON.stringify(set.issues));
    const map = actionsByAgent(set.actions, ['approve', 'deny', 'interrupt']);
    expect(map.claude).toEqual({ approve: 'keys', deny: 'keys', interrupt: 'keys' });
    expect(map.codex).toMatchObject({ approve: 'keys', deny: 'keys', interrupt: 'keys' });
    // OpenCode answers permission prompts only through its API; Gemini takes keys like Claude.
    expect(map.opencode).toMatchObject({ approve: 'api', deny: 'api' });
    expect(map.gemini).toEqual({ approve: 'keys', deny: 'keys', interrupt: 'keys' });
    expect(Object.values(map).some((m) => 'compact' in m)).toBe(false);
  });

  it('puts an exec action that names no agents under "*"', () => {
    const exec = { kind: 'exec', name: 'notes', agents: [], command: 'true', detach: false } as unknown as ActionManifest;
    const scoped = { kind: 'exec', name: 'lint', agents: ['codex'], command: 'true', detach: false } as unknown as ActionManifest;
    expect(actionsByAgent([exec, scoped], ['notes', 'lint'])).toEqual({ '*': { notes: 'exec' }, codex: { lint: 'exec' } });
    expect(actionsByAgent([exec, scoped], [])).toEqual({});
  });
});
