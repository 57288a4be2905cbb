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
    // OpenCode has keys too (used when its pane names no request at a known endpoint), so the
    // page offers Approve on it with or without the plugin; Gemini takes keys like Claude.
    expect(map.opencode).toMatchObject({ approve: 'keys', deny: 'keys' });
    expect(map.gemini).toEqual({ approve: 'keys', deny: 'keys', interrupt: 'keys' });
    expect(Object.values(map).some((m) => 'compact' in m)).toBe(false);
  });

  it('"api" only for an agent the API alone reaches', () => {
    const a = {
      kind: 'keys',
      name: 'approve',
      keys: { claude: ['1'] },
      api: { opencode: { op: 'permission-reply', reply: 'once' } },
    } as unknown as ActionManifest;
    expect(actionsByAgent([a], ['approve'])).toEqual({ claude: { approve: 'keys' }, opencode: { approve: 'api' } });
  });

  it('puts an exec action that names no agents under "*"', () => {
    const exec = { kind: 'exec', name: 'notes', agents: [], command: 'true', detach: false } as unknown as ActionManifest;
    const scoped = { kind: 'exec', name: 'lint', agents: ['codex'], command: 'true', detach: false } as unknown as ActionManifest;
    expect(actionsByAgent([exec, scoped], ['notes', 'lint'])).toEqual({ '*': { notes: 'exec' }, codex: { lint: 'exec' } });
    expect(actionsByAgent([exec, scoped], [])).toEqual({});
  });
});
