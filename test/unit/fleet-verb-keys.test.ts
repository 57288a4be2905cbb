// The contracts the fleet verbs added: the mute and preview frames between hub and collector, the
// hello's `remote_verbs`, and the pure parts of the CLI side (the ssh jump line, doctor's report,
// the readable ls and stream forms). Key sets are pinned: a new key is added here on purpose.

import { describe, expect, it } from 'vitest';
import {
  decodeFrame,
  muteRequestFrame,
  muteResultFrame,
  muteResultSchema,
  previewRequestFrame,
  previewResultFrame,
  previewResultSchema,
  previewVerdictSchema,
} from '../../shared/protocol.js';
import { ageText, edgeLine, flagWords, lsTable, serverLabel } from '../../shared/ls-table.js';
import { muteBodySchema, previewBodySchema } from '../../hub/http/fleet-verbs.js';
import { remoteAttach, sshArgv, shq } from '../../cli/fleet/ssh-jump.js';
import { hostProblems, notifyHealth } from '../../cli/fleet/doctor-verb.js';
import { effectWords } from '../../cli/fleet/act-preview.js';
import type { HostStatus } from '../../shared/fleet.js';

const keys = (s: { shape: Record<string, unknown> }) => Object.keys(s.shape);

describe('fleet verb frames', () => {
  it('pins each key set', () => {
    expect(keys(muteRequestFrame)).toEqual(['type', 'id', 'server', 'pane', 'for_ms', 'clear', 'principal']);
    expect(keys(muteResultFrame)).toEqual(['type', 'id', 'result']);
    expect(keys(muteResultSchema)).toEqual(['schema', 'pane', 'outcome', 'exit_code', 'reason', 'until_ms', 'host', 'server']);
    expect(keys(previewRequestFrame)).toEqual([
      'type',
      'id',
      'server',
      'pane',
      'actions',
      'expect_episode_ms',
      'expect_permission_request',
      'expect_prompt',
      'principal',
    ]);
    expect(keys(previewResultFrame)).toEqual(['type', 'id', 'result']);
    expect(keys(previewResultSchema)).toEqual(['schema', 'host', 'server', 'pane', 'found', 'agent', 'state', 'prompt_id', 'pending_summary', 'actions']);
    expect(keys(previewVerdictSchema)).toEqual(['name', 'fireable', 'reason', 'lane', 'keys']);
    expect(keys(muteBodySchema)).toEqual(['host', 'server', 'pane', 'for_ms', 'clear']);
    expect(keys(previewBodySchema)).toEqual(['host', 'server', 'pane', 'actions', 'expect_episode_ms', 'expect_permission_request', 'expect_prompt']);
  });

  it('a collector decodes a mute and a preview; the hub decodes their results; a mute_result is not a request', () => {
    const mute = { type: 'mute', id: 'a1', server: '/tmp/s', pane: '%3', for_ms: 60_000, clear: false, principal: 'ops' };
    expect(decodeFrame(JSON.stringify(mute), 'from-hub').ok).toBe(true);
    const preview = {
      type: 'preview',
      id: 'a2',
      server: '/tmp/s',
      pane: '%3',
      actions: ['approve'],
      expect_episode_ms: null,
      expect_permission_request: null,
      expect_prompt: null,
      principal: 'ops',
    };
    expect(decodeFrame(JSON.stringify(preview), 'from-hub').ok).toBe(true);
    const result = { schema: 1, pane: '%3', outcome: 'muted', exit_code: 0, reason: null, until_ms: 5, host: 'h', server: '/tmp/s' };
    expect(decodeFrame(JSON.stringify({ type: 'mute_result', id: 'a1', result }), 'from-collector').ok).toBe(true);
    expect(decodeFrame(JSON.stringify({ type: 'mute_result', id: 'a1', result }), 'from-hub').ok).toBe(false);
    // An empty action list asks nothing: refused at the frame.
    expect(decodeFrame(JSON.stringify({ ...preview, actions: [] }), 'from-hub').ok).toBe(false);
  });

  it('the hello may say which requests besides act a collector answers', () => {
    const hello = {
      type: 'hello',
      protocol: 1,
      host: 'h',
      collector_version: '1',
      epoch: '0123456789abcdef',
      actions_allowed: [],
      remote_verbs: ['mute', 'preview'],
    };
    expect(decodeFrame(JSON.stringify(hello), 'from-collector').ok).toBe(true);
    expect(decodeFrame(JSON.stringify({ ...hello, remote_verbs: ['Mute!'] }), 'from-collector').ok).toBe(false);
  });
});

describe('jump across hosts', () => {
  const row = { server: '/tmp/tmux-0/work', pane: '%7', locator: "it's mine:2.1" };

  it('attaches to the session, then selects the window and the pane', () => {
    expect(remoteAttach(row)).toEqual([
      'tmux',
      '-S',
      '/tmp/tmux-0/work',
      'attach-session',
      '-t',
      "=it's mine",
      ';',
      'select-window',
      '-t',
      "=it's mine:2",
      ';',
      'select-pane',
      '-t',
      '%7',
    ]);
  });

  it('quotes the remote command as one word for the far shell', () => {
    const argv = sshArgv({ destination: 'me@box', options: ['-p', '2222'], from: 'config' }, row);
    expect(argv.slice(0, 5)).toEqual(['ssh', '-t', '-p', '2222', 'me@box']);
    expect(argv[5]).toBe("tmux -S /tmp/tmux-0/work attach-session -t '=it'\\''s mine' \\; select-window -t '=it'\\''s mine:2' \\; select-pane -t %7");
    expect(shq('plain-word')).toBe('plain-word');
  });
});

describe('doctor over a hub', () => {
  const host = (over: Partial<HostStatus> = {}): HostStatus => ({
    host: 'b',
    transport: 'ws',
    reachable: true,
    stale: false,
    last_seen_ms: 1,
    reason: null,
    collector_version: '1',
    servers: [],
    actions_allowed: [],
    schema: 1,
    last_refusal: null,
    clock_offset_ms: 10,
    actions_by_agent: null,
    shares_prompt: true,
    ...over,
  });

  it('counts failed deliveries of this host only, and keeps the latest', () => {
    const list: Parameters<typeof notifyHealth>[0] = [
      { host: 'b', delivery: { ntfy: { state: 'failed', last_error: 'HTTP 500', at_ms: 5 }, log: { state: 'sent', at_ms: 4 } } },
      { host: 'b', delivery: { ntfy: { state: 'failed', last_error: 'timeout', at_ms: 9 } } },
      { host: 'c', delivery: { ntfy: { state: 'failed', last_error: 'x', at_ms: 99 } } },
    ];
    expect(notifyHealth(list, 'b')).toEqual({ total: 2, failed: 2, last_failure: { sink: 'ntfy', error: 'timeout', at_ms: 9 } });
  });

  it('names each problem, and none for a healthy host', () => {
    expect(hostProblems(host(), { total: 0, failed: 0, last_failure: null })).toEqual([]);
    expect(
      hostProblems(host({ reachable: false, reason: 'lost', last_refusal: { reason: 'host-mismatch', at_ms: 1 }, clock_offset_ms: 5000 }), {
        total: 1,
        failed: 1,
        last_failure: null,
      }),
    ).toEqual(['link down (lost)', 'link refused: host-mismatch', 'clock off by 5000 ms', '1 notification delivery failed']);
  });
});

describe('readable forms', () => {
  it('ages in the largest whole unit', () => {
    expect([0, 59_999, 60_000, 3_599_999, 3_600_000, 86_400_000].map(ageText)).toEqual(['0s', '59s', '1m', '59m', '1h', '1d']);
  });

  it('the table has a header, words for flags, and a server column only when asked', () => {
    const r = {
      pane: '%1',
      agent: 'claude',
      state: 'blocked',
      detail: 'permission',
      since_ms: 0,
      locator: 'main:0.0',
      attention: true,
      muted: true,
      repo: 'tma',
      branch: 'main',
      worktree: false,
      server: '/tmp/tmux-0/work',
    };
    const out = lsTable([r], 180_000, { server: true });
    expect(out.split('\n')[0]).toMatch(/^SERVER +PANE +AGENT +STATE +AGE +WHERE +REPO +FLAGS$/);
    expect(out.split('\n')[1]).toMatch(/^work +%1 +claude +blocked \(permission\) +3m +main:0\.0 +tma@main +attention,muted$/);
    expect(lsTable([r], 0)).not.toContain('SERVER');
    expect(flagWords({ ...r, attention: false, muted: false, stale: true })).toBe('stale');
    expect(serverLabel('/run/elsewhere/sock')).toBe('/run/elsewhere/sock');
  });

  it('a state change reads as one line', () => {
    const at = new Date(2026, 0, 1, 12, 3, 4).getTime();
    const e = {
      at_ms: at,
      pane: '%3',
      agent: 'claude',
      from: 'working' as const,
      to: 'blocked' as const,
      detail: 'permission',
      locator: 's:0.1',
      host: 'build1',
    };
    expect(edgeLine(e, true)).toBe('12:03:04 build1 %3 claude working → blocked (permission) s:0.1');
    expect(edgeLine({ ...e, from: 'blocked', to: '' }, false)).toBe('12:03:04 %3 claude gone (was blocked) s:0.1');
  });

  it('what a fire would send, never an address', () => {
    expect(effectWords({ lane: 'keys', keys: ['1'] })).toBe('keys: 1');
    expect(effectWords({ lane: 'api', keys: null })).not.toMatch(/http/);
    expect(effectWords({ lane: null, keys: null })).toBe('none');
  });
});
