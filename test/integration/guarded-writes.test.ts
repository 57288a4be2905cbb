// The rendered guarded chains, executed by a real tmux: the suppress expressions are evaluated
// server-side, command by command, so only a real server proves what they do.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadManifestSet } from '../../collector/core/manifest-load.js';
import { chain, renderHookCompanion, renderPublish } from '../../collector/core/stamp-render.js';
import { decodeStamp } from '../../collector/core/store-codec.js';
import type { Guard, PublishPlan } from '../../collector/core/types.js';
import { intakeEvent } from '../../collector/engine/event-intake.js';
import { bundledManifestDir, readManifestFiles } from '../../collector/manifest-files.js';
import { openRunner } from '../../collector/tmux/runner.js';
import type { TmuxRunner } from '../../collector/tmux/runner.js';
import { ScratchTmux } from '../support/scratch-tmux.js';

let t: ScratchTmux;
let runner: TmuxRunner;
let pane: string;
const T0 = 1_790_000_000_000;

beforeEach(async () => {
  t = new ScratchTmux('gw');
  pane = t.start();
  runner = await openRunner({ kind: 'name', name: t.name }, { mode: 'spawn', bin: 'tmux' });
});
afterEach(() => {
  runner.close();
  t.kill();
});

function plan(over: Partial<PublishPlan>): PublishPlan {
  return {
    kind: 'publish',
    state: 'idle',
    detail: null,
    source: 'capture',
    evidenceAt: T0,
    since: T0,
    stampedAt: T0,
    hash: null,
    pid: 42,
    name: 'claude',
    setAttention: false,
    episodeReset: false,
    guard: { kind: 'protect_hook' },
    ...over,
  };
}

async function publish(p: PublishPlan): Promise<void> {
  await runner.run(chain(renderPublish(pane, p, { guarded: true, prev: null })));
}

function stored(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of t.tmux('show-options', '-p', '-t', pane).split('\n')) {
    const m = /^(@\S+) (.*)$/.exec(line);
    if (m) out[m[1]!] = m[2]!.replace(/^"(.*)"$/, '$1');
  }
  return out;
}

const hook = (at: number): Guard => ({ kind: 'hook_arbitrate', sentAt: at });

describe('guards on a real server', () => {
  it('a hook stamp lands whole on a capture stamp whose evidence is newer', async () => {
    await publish(plan({ state: 'working', evidenceAt: T0 + 500, since: T0 + 500, stampedAt: T0 + 500 }));
    await publish(plan({ state: 'idle', source: 'hook', evidenceAt: T0, since: T0, stampedAt: T0, setAttention: true, guard: hook(T0) }));
    expect(stored()).toMatchObject({ '@agent_state': 'idle', '@agent_source': 'hook', '@agent_evidence_at': String(T0), '@agent_attention': '1' });
  });

  it('an older hook stamp never overrides a newer hook claim; a newer one does', async () => {
    await publish(plan({ state: 'working', source: 'hook', evidenceAt: T0, guard: hook(T0) }));
    await publish(plan({ state: 'idle', source: 'hook', evidenceAt: T0 - 1, since: T0 - 1, guard: hook(T0 - 1) }));
    expect(stored()['@agent_state']).toBe('working');
    // Equal evidence time is not older: the later writer wins the tie.
    await publish(plan({ state: 'idle', source: 'hook', evidenceAt: T0, since: T0, guard: hook(T0) }));
    expect(stored()['@agent_state']).toBe('idle');
  });

  it('a capture never overwrites a hook claim; blocker chrome does only when newer', async () => {
    await publish(plan({ state: 'working', source: 'hook', evidenceAt: T0, guard: hook(T0) }));
    await publish(plan({ state: 'idle', evidenceAt: T0 + 9000, stampedAt: T0 + 9000 }));
    expect(stored()).toMatchObject({ '@agent_state': 'working', '@agent_source': 'hook', '@agent_stamped_at': String(T0 + 9000) });
    await publish(plan({ state: 'blocked', detail: 'permission', evidenceAt: T0, guard: { kind: 'carve_out', captureAt: T0 } }));
    expect(stored()['@agent_state']).toBe('working');
    await publish(plan({ state: 'blocked', detail: 'permission', evidenceAt: T0 + 1, since: T0 + 1, guard: { kind: 'carve_out', captureAt: T0 + 1 } }));
    expect(stored()).toMatchObject({ '@agent_state': 'blocked', '@agent_detail': 'permission', '@agent_source': 'capture' });
  });

  it('since is written once per state run, and rewritten after a backward clock step', async () => {
    await publish(plan({ state: 'working', since: T0, evidenceAt: T0 }));
    await publish(plan({ state: 'working', since: T0 + 5000, evidenceAt: T0 + 5000, stampedAt: T0 + 5000 }));
    expect(stored()['@agent_since']).toBe(String(T0));
    await publish(plan({ state: 'idle', since: T0 + 6000, evidenceAt: T0 + 6000, stampedAt: T0 + 6000 }));
    expect(stored()['@agent_since']).toBe(String(T0 + 6000));
    // The clock went back 10 s: a since that far ahead of the new stamp is not kept.
    await publish(plan({ state: 'idle', since: T0 - 4000, evidenceAt: T0 - 4000, stampedAt: T0 - 4000 }));
    expect(stored()['@agent_since']).toBe(String(T0 - 4000));
  });

  it('a refresh of a hook claim lands only while the claim stands', async () => {
    await publish(plan({ state: 'working', source: 'hook', evidenceAt: T0, guard: hook(T0) }));
    await publish(plan({ state: 'working', source: 'hook', evidenceAt: T0 + 100, guard: { kind: 'refresh_claim', state: 'working' } }));
    expect(stored()['@agent_evidence_at']).toBe(String(T0 + 100));
    await publish(plan({ state: 'idle', source: 'hook', evidenceAt: T0 + 200, since: T0 + 200, guard: hook(T0 + 200) }));
    await publish(plan({ state: 'working', source: 'hook', evidenceAt: T0 + 300, guard: { kind: 'refresh_claim', state: 'working' } }));
    expect(stored()['@agent_state']).toBe('idle');
  });

  it('a companion value with format characters is stored literally', async () => {
    const value = 'a,b #{x} }';
    await runner.run(chain([renderHookCompanion(pane, '@agent_session', value, hook(T0))]));
    expect(t.option(pane, '@agent_session')).toBe(value);
  });
});

describe('hook events applied in the order they were sent', () => {
  const manifests = () => loadManifestSet(readManifestFiles(bundledManifestDir()), []).manifests;
  const event = (agent: string, kind: string, payload: string, now: number) => intakeEvent({ runner, manifests: manifests(), agent, kind, pane, payload, now });

  it("a late 'replied' of one prompt does not wipe the request id of the prompt after it", async () => {
    await event('opencode', 'permission-required', '{"session_id":"s-1","request_id":"per_1"}', T0);
    // Request 2 is stamped first; the reply to request 1, sent before it, lands after it.
    await event('opencode', 'permission-required', '{"session_id":"s-1","request_id":"per_2"}', T0 + 200);
    await event('opencode', 'permission-replied', '{"session_id":"s-1","request_id":"per_1"}', T0 + 100);
    expect(stored()).toMatchObject({ '@agent_state': 'blocked', '@agent_permission_request': 'per_2' });
    // A reply sent after request 2 clears it.
    await event('opencode', 'permission-replied', '{"session_id":"s-1","request_id":"per_2"}', T0 + 300);
    expect(t.option(pane, '@agent_permission_request')).toBe('');
  });

  it('an older pre-tool event landing late changes neither the blocked claim nor what it asks', async () => {
    const ask = (command: string) => JSON.stringify({ session_id: 's-1', tool_name: 'Bash', tool_input: { command } });
    await event('claude', 'PreToolUse', ask('touch b'), T0 + 100);
    await event(
      'claude',
      'Notification',
      '{"session_id":"s-1","notification_type":"permission_prompt","message":"Claude needs your permission to use Bash"}',
      T0 + 200,
    );
    const before = stored();
    expect(before).toMatchObject({ '@agent_state': 'blocked', '@agent_evidence_at': String(T0 + 200) });
    await event('claude', 'PreToolUse', ask('rm -rf a'), T0 + 50);
    const after = stored();
    expect(after['@agent_state']).toBe('blocked');
    for (const k of ['@agent_pending_tool', '@agent_pending_call', '@agent_pending_summary']) expect(after[k], k).toBe(before[k]);
  });

  // Gemini CLI with a collector: its screen read corroborated the working claim of BeforeAgent
  // (evidence_at moved to the capture) just before the BeforeTool hook process, started late,
  // got round to its write. The event was sent after the claim, so all of it lands.
  const gemini = (name: string, sent: number, extra: Record<string, unknown> = {}) =>
    JSON.stringify({ session_id: 'g-1', hook_event_name: name, timestamp: new Date(sent).toISOString(), ...extra });
  const beforeTool = (sent: number) => gemini('BeforeTool', sent, { tool_name: 'run_shell_command', tool_input: { command: 'echo ran >> ran.txt' } });
  const notification = (sent: number) =>
    gemini('Notification', sent, { notification_type: 'ToolPermission', details: { type: 'exec', command: 'echo ran >> ran.txt' } });

  it('a hook event lands whole after a screen read corroborated the claim before it', async () => {
    await event('gemini', 'BeforeAgent', gemini('BeforeAgent', T0), T0 + 100);
    await publish(plan({ state: 'working', source: 'hook', evidenceAt: T0 + 3000, name: 'gemini', guard: { kind: 'refresh_claim', state: 'working' } }));
    expect(stored()['@agent_evidence_at']).toBe(String(T0 + 3000));
    await event('gemini', 'BeforeTool', beforeTool(T0 + 2000), T0 + 2900);
    expect(stored()).toMatchObject({ '@agent_pending_tool': 'run_shell_command', '@agent_pending_summary': 'run_shell_command: echo ran >> ran.txt' });
    await publish(plan({ state: 'working', source: 'hook', evidenceAt: T0 + 6000, name: 'gemini', guard: { kind: 'refresh_claim', state: 'working' } }));
    await event('gemini', 'Notification', notification(T0 + 5000), T0 + 5800);
    expect(stored()).toMatchObject({ '@agent_state': 'blocked', '@agent_detail': 'permission', '@agent_pending_tool': 'run_shell_command' });
  });

  it("events are ordered by the agent's own timestamp, not by when their processes took them in", async () => {
    await event('gemini', 'BeforeAgent', gemini('BeforeAgent', T0), T0 + 100);
    // The Notification's process was quicker than the BeforeTool's sent before it.
    await event('gemini', 'Notification', notification(T0 + 1000), T0 + 3000);
    await event('gemini', 'BeforeTool', beforeTool(T0 + 500), T0 + 3500);
    expect(stored()).toMatchObject({ '@agent_state': 'blocked', '@agent_evidence_at': String(T0 + 3000), '@agent_hook_at': String(T0 + 1000) });
    expect(t.option(pane, '@agent_pending_tool')).toBe('');
  });
});

describe('a server that cannot expand set-option -F', () => {
  /** tmux before 3.2 accepts `set-option -F` and stores the format text itself; so does this runner. */
  function literalFormats(inner: TmuxRunner): TmuxRunner {
    const strip = (argv: string[]): string[] => {
      const out: string[] = [];
      let cmd: string[] = [];
      const flush = () => out.push(...(cmd[0] === 'set-option' ? cmd.filter((a) => a !== '-F') : cmd));
      for (const a of argv) {
        if (a === ';') {
          flush();
          out.push(a);
          cmd = [];
        } else cmd.push(a);
      }
      flush();
      return out;
    };
    return {
      mode: inner.mode,
      run: (argv, opts) => inner.run(strip(argv), opts),
      runChain: (cmds, opts) => inner.runChain(cmds.map(strip), opts),
      close: () => inner.close(),
    };
  }

  it('a hook stamp writes its companions and rollups plainly, so the tuple still decodes', async () => {
    t.tmux('set-option', '-s', '@tma_setpf_ok', '0');
    const manifests = loadManifestSet(readManifestFiles(bundledManifestDir()), []).manifests;
    const old = literalFormats(runner);
    const event = (kind: string, payload: string, now: number) => intakeEvent({ runner: old, manifests, agent: 'claude', kind, pane, payload, now });
    await event('SessionStart', '{"session_id":"s-1"}', T0);
    await event('UserPromptSubmit', '{"session_id":"s-1"}', T0 + 1000);
    const done = await event('Stop', '{"session_id":"s-1"}', T0 + 2000);
    expect(done.commands.flat()).not.toContain('-F');

    const opts = stored();
    const d = decodeStamp(opts);
    expect(d).toMatchObject({ ok: true, stamp: { state: 'idle', source: 'hook', attention: true, session: 's-1', turnAt: T0 + 2000 } });
    expect(t.tmux('show-options', '-wqv', '-t', pane, '@agent_summary').trim()).toBe('idle:1');
    expect(t.tmux('show-options', '-qv', '-t', pane, '@agent_session_summary').trim()).toBe('idle:1');
  });
});
