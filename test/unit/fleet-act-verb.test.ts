import { describe, expect, test } from 'vitest';
import { UsageError, parseArgv } from '../../cli/args.js';
import { bodyFor, pickRow, planFleetAct, remoteEnvelope, remoteNote, remoteResultObject, worstRemoteExit } from '../../cli/fleet/act-verb.js';
import { VERBS } from '../../cli/main.js';
import type { FleetRow } from '../../shared/fleet.js';
import type { ActResult } from '../../shared/protocol.js';

const row = (host: string, server: string, pane: string, over: Partial<FleetRow> = {}): FleetRow =>
  ({ host, server, pane, locator: 'main:1.0', episode_ms: 1000, permission_request: null, ...over }) as FleetRow;

const plan = (...argv: string[]) => planFleetAct(parseArgv(['act', ...argv], VERBS));

describe('planFleetAct', () => {
  test('a pane with --host and --server is a single fire', () => {
    expect(plan('approve', '--host', 'b1', '--server', '/s', '--pane', '%1')).toMatchObject({ action: 'approve', all: false, pane: '%1', server: '/s' });
  });

  test('local-only flags are usage errors against a hub', () => {
    for (const f of [['--force'], ['--yes'], ['--list'], ['--arg', 'x']]) {
      expect(() => plan('approve', '--pane', '%1', ...f)).toThrow(UsageError);
    }
  });

  test('--dry-run and --list are planned against a hub: the host answers them, nothing is sent', () => {
    expect(plan('approve', '--pane', '%1', '--dry-run')).toMatchObject({ dryRun: true, list: false, action: 'approve', pane: '%1' });
    expect(plan('--list', '--pane', '%1')).toMatchObject({ list: true, pane: '%1' });
    expect(() => plan('--list', '--dry-run')).toThrow(/--list cannot be combined with --dry-run/);
    expect(() => plan('approve', '--pane', '%1', '--dry-run', '--slot', 's1')).toThrow(/dry run sends nothing/);
  });

  test('no target, a bad pane id, --pane with other selectors or --all: usage errors', () => {
    expect(() => plan('approve')).toThrow(/no target/);
    expect(() => plan('approve', '--pane', '1')).toThrow(/pane id/);
    expect(() => plan('approve', '--pane', '%1', '--agent', 'claude')).toThrow(UsageError);
    expect(() => plan('approve', '--pane', '%1', '--all')).toThrow(UsageError);
    expect(() => plan()).toThrow(/action name/);
  });

  test('--slot: 200 characters accepted, 201 and odd characters refused; not with --all', () => {
    expect(plan('approve', '--pane', '%1', '--slot', 'k'.repeat(200)).given.slot).toBe('k'.repeat(200));
    expect(() => plan('approve', '--pane', '%1', '--slot', 'k'.repeat(201))).toThrow(UsageError);
    expect(() => plan('approve', '--pane', '%1', '--slot', 'a/b')).toThrow(UsageError);
    expect(() => plan('approve', '--all', '--slot', 'k')).toThrow(/--all/);
    expect(() => plan('approve', '--all', '--expect-episode-ms', '5')).toThrow(/--all/);
  });

  test('binders: digits only for the episode; given values are kept', () => {
    expect(plan('approve', '--pane', '%1', '--expect-episode-ms', '0').given.expectEpisodeMs).toBe(0);
    expect(() => plan('approve', '--pane', '%1', '--expect-episode-ms', '-1')).toThrow(UsageError);
    expect(plan('approve', '--pane', '%1', '--expect-permission-request', 'r7').given.expectPermissionRequest).toBe('r7');
  });

  test('--all with a selector, or with none (the whole fleet), fans out', () => {
    expect(plan('approve', '--all', '--state', 'blocked').all).toBe(true);
    expect(plan('approve', '--all').all).toBe(true);
  });
});

describe('pickRow', () => {
  const rows = [row('b1', '/s1', '%1'), row('b1', '/s2', '%1'), row('lap', '/s1', '%1'), row('b1', '/s1', '%2')];

  test('exactly one match is the target', () => {
    expect(pickRow(rows, { pane: '%1', host: 'b1', server: '/s2' })).toEqual({ kind: 'ok', row: rows[1] });
    expect(pickRow(rows, { pane: '%2', host: null, server: null })).toEqual({ kind: 'ok', row: rows[3] });
  });

  test('none: exit 3; several: exit 1 naming every candidate host and server', () => {
    expect(pickRow(rows, { pane: '%9', host: 'b1', server: null })).toMatchObject({ kind: 'fail', code: 3 });
    const many = pickRow(rows, { pane: '%1', host: 'b1', server: null });
    expect(many).toMatchObject({ kind: 'fail', code: 1 });
    if (many.kind !== 'fail') throw new Error('unreachable');
    expect(many.message).toContain('b1 /s1 %1');
    expect(many.message).toContain('b1 /s2 %1');
    expect(many.message).not.toContain('lap');
  });
});

describe('bodyFor', () => {
  const r = row('b1', '/s1', '%4', { episode_ms: 42, permission_request: 'req-1', prompt_id: '00000000000000aa' });

  test('binds to what the row showed unless the caller said otherwise', () => {
    const b = bodyFor('approve', r, { expectEpisodeMs: null, expectPermissionRequest: null, slot: 'k' });
    expect(b).toEqual({
      host: 'b1',
      server: '/s1',
      pane: '%4',
      action: 'approve',
      expect_episode_ms: 42,
      expect_permission_request: 'req-1',
      slot: 'k',
      expect_prompt: '00000000000000aa',
    });
    expect(bodyFor('approve', r, { expectEpisodeMs: null, expectPermissionRequest: null, slot: 'k', expectPrompt: 'ff' }).expect_prompt).toBe('ff');
    expect(bodyFor('approve', { ...r, prompt_id: null }, { expectEpisodeMs: null, expectPermissionRequest: null, slot: 'k' }).expect_prompt).toBeNull();
    const given = bodyFor('approve', r, { expectEpisodeMs: 7, expectPermissionRequest: 'req-2', slot: 'k' });
    expect(given).toMatchObject({ expect_episode_ms: 7, expect_permission_request: 'req-2' });
    expect(
      bodyFor('approve', { ...r, permission_request: null }, { expectEpisodeMs: null, expectPermissionRequest: null, slot: 'k' }).expect_permission_request,
    ).toBeNull();
  });

  test('a fresh random slot per request when none is given', () => {
    const a = bodyFor('approve', r, { expectEpisodeMs: null, expectPermissionRequest: null, slot: null }).slot;
    const b = bodyFor('approve', r, { expectEpisodeMs: null, expectPermissionRequest: null, slot: null }).slot;
    expect(a).toMatch(/^[A-Za-z0-9._:-]{1,200}$/);
    expect(a).not.toBe(b);
  });
});

const res = (over: Partial<ActResult>): ActResult => ({
  schema: 1,
  action: 'approve',
  pane: '%1',
  outcome: 'sent',
  exit_code: 0,
  reason: null,
  host: 'b1',
  server: '/s',
  ...over,
});

describe('results', () => {
  test('wire order: local keys, cached when present, then host and server', () => {
    expect(Object.keys(remoteResultObject(res({ cached: true })))).toEqual([
      'schema',
      'action',
      'pane',
      'outcome',
      'exit_code',
      'reason',
      'cached',
      'host',
      'server',
    ]);
    expect(Object.keys(remoteResultObject(res({})))).toEqual(['schema', 'action', 'pane', 'outcome', 'exit_code', 'reason', 'host', 'server']);
    expect(remoteEnvelope([res({})])).toEqual({
      schema: 1,
      results: [{ action: 'approve', pane: '%1', outcome: 'sent', exit_code: 0, reason: null, host: 'b1', server: '/s' }],
    });
  });

  test("fan-out exit is the worst result by severity, with that result's own code", () => {
    const locked = res({ outcome: 'refused', reason: 'locked', exit_code: 5 });
    const gated = res({ outcome: 'refused', reason: 'gated', exit_code: 4 });
    const timeout = res({ outcome: 'timeout', reason: 'fired-unknown', exit_code: 124 });
    const failed = res({ outcome: 'error', exit_code: 1 });
    expect(worstRemoteExit([])).toBe(0);
    expect(worstRemoteExit([res({}), locked])).toBe(5);
    expect(worstRemoteExit([locked, gated])).toBe(4);
    expect(worstRemoteExit([gated, timeout])).toBe(124);
    expect(worstRemoteExit([timeout, failed])).toBe(1);
    // Unknown outcomes rank as errors, never as success.
    expect(worstRemoteExit([timeout, res({ outcome: 'brand-new', exit_code: 9 })])).toBe(9);
  });

  test('notes say what happened and, when a fire may have landed, how to ask again', () => {
    expect(remoteNote(res({}), 'k')).toBe('approve %1 on b1: keys sent');
    expect(remoteNote(res({ cached: true }), 'k')).toBe('approve %1 on b1: keys sent (replayed)');
    expect(remoteNote(res({ outcome: 'timeout', reason: 'fired-unknown', exit_code: 124 }), 'k9')).toContain('--slot k9');
    expect(remoteNote(res({ outcome: 'timeout', reason: 'undelivered', exit_code: 124 }), 'k9')).toMatch(/nothing was sent/);
    expect(remoteNote(res({ outcome: 'refused', reason: 'not-allowed', exit_code: 4 }), 'k')).toBe('approve %1 on b1: refused (not-allowed)');
    expect(remoteNote(res({ outcome: 'exited', exit_code: 3 }), 'k')).toBeNull();
  });
});
