import { describe, expect, test } from 'vitest';
import { parseActionManifest, type ActionManifest } from '../../collector/core/action-manifest.js';
import { apiPrecondition, appliesTo, binderRefusal, endpointFor, gate, keysFor, validEndpoint, type GateFacts } from '../../collector/act/gate.js';

function action(name: string, body: string): ActionManifest {
  return parseActionManifest({ path: `/x/${name}.toml`, text: `min_engine_version = "0.4.0"\nname = "${name}"\nlabel = "L"\n${body}` });
}

const approve = action(
  'approve',
  'kind = "keys"\n[when]\nstate = ["blocked"]\ndetail = ["permission"]\n[keys]\nclaude = ["1"]\n[api]\nopencode = { op = "permission-reply", reply = "once" }\n',
);
const compact = action(
  'compact',
  'kind = "keys"\nrequires = ["session"]\n[when]\nstate = ["idle"]\ncontext_pct_min = 75\ncontext_pct_max = 90\n[keys]\nclaude = ["/compact", "Enter"]\n',
);
const anyExec = action('run', 'kind = "exec"\ncommand = "true"\nrequires = ["cwd", "pid", "title"]\n');

const blocked: GateFacts = { agent: 'claude', state: 'blocked', detail: 'permission', contextPct: null, session: 'abc_1', cwd: '/w', pid: 42, title: 't' };
const idle = (pct: number | null, more: Partial<GateFacts> = {}): GateFacts => ({ ...blocked, state: 'idle', detail: null, contextPct: pct, ...more });
const opts = { hasContextTelemetry: true, force: false };

describe('gate', () => {
  test('fires on a matching pane', () => {
    expect(gate(approve, blocked, opts)).toBeNull();
  });

  test('wrong-agent for an agent without a transport, an unstamped pane, and comes before everything else', () => {
    expect(gate(approve, { ...blocked, agent: 'gemini' }, opts)).toBe('wrong-agent');
    expect(gate(approve, { ...blocked, agent: null }, opts)).toBe('wrong-agent');
    // Also wrong on every other count: applicability is still what is reported.
    expect(gate(compact, { ...idle(null), agent: 'pi', session: null }, { hasContextTelemetry: false, force: false })).toBe('wrong-agent');
    expect(gate(approve, { ...blocked, agent: 'gemini' }, { ...opts, force: true })).toBe('wrong-agent');
  });

  test('an exec action with no agents list applies to every stamped agent, never to an unstamped pane', () => {
    expect(appliesTo(anyExec, 'pi')).toBe(true);
    expect(appliesTo(anyExec, null)).toBe(false);
    expect(appliesTo(approve, 'opencode')).toBe(true);
  });

  test('no-coverage before requires-unmet before gated', () => {
    const noSession = idle(10, { session: null });
    expect(gate(compact, noSession, { hasContextTelemetry: false, force: false })).toBe('no-coverage');
    expect(gate(compact, noSession, opts)).toBe('requires-unmet');
    expect(gate(compact, idle(10), opts)).toBe('gated');
  });

  test('context bounds are inclusive: at, under and over each end', () => {
    expect(gate(compact, idle(74), opts)).toBe('gated');
    expect(gate(compact, idle(75), opts)).toBeNull();
    expect(gate(compact, idle(76), opts)).toBeNull();
    expect(gate(compact, idle(89), opts)).toBeNull();
    expect(gate(compact, idle(90), opts)).toBeNull();
    expect(gate(compact, idle(91), opts)).toBe('gated');
    expect(gate(compact, idle(null), opts)).toBe('gated');
  });

  test('state and detail must both match; an absent detail fails a detail list', () => {
    expect(gate(approve, { ...blocked, state: 'idle' }, opts)).toBe('gated');
    expect(gate(approve, { ...blocked, detail: null }, opts)).toBe('gated');
    expect(gate(approve, { ...blocked, detail: 'question' }, opts)).toBe('gated');
  });

  test("a dialog's own keys go on a pane showing its detail, the agent's keys on any other", () => {
    const dialogs = action(
      'approve',
      'kind = "keys"\n[when]\nstate = ["blocked"]\ndetail = ["permission", "auto-mode-check"]\n[keys]\nclaude = ["1"]\ncodex = ["y"]\n[dialog_keys.claude]\nauto-mode-check = ["Enter"]\n',
    );
    expect(gate(dialogs, { ...blocked, detail: 'auto-mode-check' }, opts)).toBeNull();
    expect(keysFor(dialogs, 'claude', 'auto-mode-check')).toEqual(['Enter']);
    expect(keysFor(dialogs, 'claude', 'permission')).toEqual(['1']);
    expect(keysFor(dialogs, 'claude', null)).toEqual(['1']);
    // Another agent's pane never takes Claude's dialog keys.
    expect(keysFor(dialogs, 'codex', 'auto-mode-check')).toEqual(['y']);
    expect(keysFor(dialogs, 'gemini', 'permission')).toBeNull();
    expect(keysFor(dialogs, null, 'permission')).toBeNull();
    expect(keysFor(anyExec, 'claude', 'permission')).toBeNull();
  });

  test('--force skips when (and so no-coverage) but never requires', () => {
    const force = { hasContextTelemetry: false, force: true };
    expect(gate(compact, idle(null), force)).toBeNull();
    expect(gate(compact, idle(null, { session: null }), force)).toBe('requires-unmet');
  });

  test('requires: session charset, non-empty cwd and title, non-zero pid', () => {
    expect(gate(compact, idle(80, { session: 'bad id' }), opts)).toBe('requires-unmet');
    expect(gate(anyExec, { ...blocked }, opts)).toBeNull();
    expect(gate(anyExec, { ...blocked, cwd: '' }, opts)).toBe('requires-unmet');
    expect(gate(anyExec, { ...blocked, pid: 0 }, opts)).toBe('requires-unmet');
    expect(gate(anyExec, { ...blocked, title: '' }, opts)).toBe('requires-unmet');
  });
});

describe('API lane preconditions', () => {
  test('only for agents routed to the API; need a request id and a plain-http endpoint', () => {
    expect(apiPrecondition(approve, 'claude', null, null)).toBeNull();
    expect(apiPrecondition(approve, 'opencode', 'per_1', 'http://127.0.0.1:4096')).toBeNull();
    expect(apiPrecondition(approve, 'opencode', null, 'http://127.0.0.1:4096')).toBe('requires-unmet');
    expect(apiPrecondition(approve, 'opencode', 'per\r\nX: y', 'http://127.0.0.1:4096')).toBe('requires-unmet');
    expect(apiPrecondition(approve, 'opencode', 'per_1', null)).toBe('requires-unmet');
  });

  test('endpoints: plain http only, no whitespace or controls; the pane wins over the config', () => {
    expect(validEndpoint('http://127.0.0.1:4096')).toBe(true);
    expect(validEndpoint('http://localhost:4096/base')).toBe(true);
    expect(validEndpoint('https://localhost:4096')).toBe(false);
    expect(validEndpoint('http://local host')).toBe(false);
    expect(validEndpoint('http://h\n')).toBe(false);
    expect(endpointFor('http://a:1', 'opencode', { opencode: 'http://b:2' })).toBe('http://a:1');
    expect(endpointFor('ftp://a', 'opencode', { opencode: 'http://b:2' })).toBe('http://b:2');
    expect(endpointFor(null, 'opencode', {})).toBeNull();
  });
});

describe('binders', () => {
  const seen = { episodeMs: 1000, permissionRequest: 'per_1' };
  test('the episode must be exactly the one quoted', () => {
    expect(binderRefusal({ expectEpisodeMs: 1000 }, seen)).toBeNull();
    expect(binderRefusal({ expectEpisodeMs: 999 }, seen)).toBe('episode-changed');
    expect(binderRefusal({ expectEpisodeMs: 1001 }, seen)).toBe('episode-changed');
    expect(binderRefusal({ expectEpisodeMs: 1000 }, { ...seen, episodeMs: null })).toBe('episode-changed');
  });
  test('the permission request must still be on the pane', () => {
    expect(binderRefusal({ expectPermissionRequest: 'per_1' }, seen)).toBeNull();
    expect(binderRefusal({ expectPermissionRequest: 'per_2' }, seen)).toBe('request-gone');
    expect(binderRefusal({ expectPermissionRequest: 'per_1' }, { ...seen, permissionRequest: null })).toBe('request-gone');
  });
  test('no binders, no refusal; the episode is reported before the request', () => {
    expect(binderRefusal({}, { episodeMs: null, permissionRequest: null })).toBeNull();
    expect(binderRefusal({ expectEpisodeMs: 1, expectPermissionRequest: 'x' }, seen)).toBe('episode-changed');
  });
});
