import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { actResult } from '../../collector/act/outcome.js';
import { claimSlot, receiptName, receiptsDir, recordResult, replayFromLedger } from '../../collector/act/receipts.js';

describe('receiptsDir', () => {
  test('XDG_STATE_HOME when absolute, else ~/.local/state', () => {
    expect(receiptsDir({ XDG_STATE_HOME: '/s', HOME: '/h' })).toBe('/s/tma/receipts');
    expect(receiptsDir({ XDG_STATE_HOME: 'rel', HOME: '/h' })).toBe('/h/.local/state/tma/receipts');
    expect(receiptsDir({ HOME: '/h' })).toBe('/h/.local/state/tma/receipts');
  });
});

describe('receiptName', () => {
  test('one name per (slot, server), none revealing the slot', () => {
    const a = receiptName('op-1', '/tmp/tmux-1/default');
    expect(a).toMatch(/^[0-9a-f]{64}\.json$/);
    expect(receiptName('op-1', '/tmp/tmux-1/default')).toBe(a);
    expect(receiptName('op-1', '/tmp/tmux-1/other')).not.toBe(a);
    expect(receiptName('op-2', '/tmp/tmux-1/default')).not.toBe(a);
    // The separator keeps (ab, c) and (a, bc) apart.
    expect(receiptName('ab', 'c')).not.toBe(receiptName('a', 'bc'));
  });
});

describe('replayFromLedger', () => {
  const final = (r: object) => JSON.stringify({ status: 'final', action: 'approve', pane: '%1', result: r });

  test('a final result replays unchanged except cached', () => {
    for (const r of [actResult('approve', '%1', 'sent'), actResult('approve', '%1', 'refused', 'locked'), actResult('x', '%2', 'exited', null, 7)]) {
      expect(replayFromLedger(final(r), 'approve', '%1')).toEqual({ ...r, cached: true });
    }
  });

  test('a recorded error replays as fired-unknown', () => {
    expect(replayFromLedger(final(actResult('approve', '%1', 'error')), 'approve', '%1')).toEqual({
      schema: 1,
      action: 'approve',
      pane: '%1',
      outcome: 'error',
      exit_code: 1,
      reason: 'fired-unknown',
      cached: true,
    });
  });

  test('in-flight, unreadable, malformed: all fired-unknown, exit 1', () => {
    const cases = [
      JSON.stringify({ status: 'in-flight', action: 'approve', pane: '%1' }),
      null,
      '{"status":"fin',
      '42',
      final({ action: 'approve', pane: '%1', outcome: 'exploded', exit_code: 0, reason: null }),
      final({ action: 'approve', pane: '%1', outcome: 'sent', reason: null }),
    ];
    for (const text of cases) {
      expect(replayFromLedger(text, 'approve', '%1'), String(text)).toMatchObject({ outcome: 'error', reason: 'fired-unknown', exit_code: 1, cached: true });
    }
  });
});

describe('ledger on disk', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tma-receipts-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  test('first claim wins; a second before the result is recorded reads fired-unknown', () => {
    const first = claimSlot(dir, 's', '/sock', 'approve', '%1');
    expect(first.kind).toBe('claimed');
    const second = claimSlot(dir, 's', '/sock', 'approve', '%1');
    expect(second).toEqual({ kind: 'replay', path: expect.any(String), result: { ...actResult('approve', '%1', 'error', 'fired-unknown'), cached: true } });
  });

  test('after the result is recorded, a second claim replays it; another server is a separate slot', () => {
    const first = claimSlot(dir, 's', '/sock', 'approve', '%1');
    if (first.kind !== 'claimed') throw new Error('expected a claim');
    const res = actResult('approve', '%1', 'sent');
    recordResult(first.path, { ...res, cached: false });
    expect(claimSlot(dir, 's', '/sock', 'approve', '%1')).toEqual({ kind: 'replay', path: expect.any(String), result: { ...res, cached: true } });
    expect(claimSlot(dir, 's', '/other', 'approve', '%1').kind).toBe('claimed');
    // No temp file is left behind by the atomic rewrite.
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    expect(JSON.parse(readFileSync(first.path, 'utf8')).result).toEqual(res);
  });

  test('a ledger file that cannot be parsed is fired-unknown, never a fresh fire', () => {
    writeFileSync(join(dir, receiptName('s', '/sock')), 'garbage');
    expect(claimSlot(dir, 's', '/sock', 'approve', '%1')).toMatchObject({ kind: 'replay', result: { reason: 'fired-unknown' } });
  });
});
