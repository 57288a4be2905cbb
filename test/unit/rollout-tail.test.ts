// The Codex rollout tail's file side, on temporary files: the backward scan, the memo and the
// per-session discovery cache.

import { appendFileSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findRollout, RolloutTail, tailFile } from '../../collector/engine/rollout-tail.js';

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'tma-rollout-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const record = (used: number, window = 272000) =>
  `{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"total_tokens":${used}},"model_context_window":${window}}}}\n`;

function rollout(day: string, session: string, text: string): string {
  const dir = join(root, 'sessions', '2026', '11', day);
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `rollout-2026-11-${day}T09-00-00-${session}.jsonl`);
  writeFileSync(path, text);
  return path;
}

describe('rollout tail', () => {
  it('scans backwards past the first window when the last record is older than 64 KiB', () => {
    const filler = `${JSON.stringify({ type: 'response_item', text: 'x'.repeat(1000) })}\n`.repeat(70);
    const path = rollout('30', 's1', record(204000) + filler);
    expect(tailFile(path, Buffer.byteLength(record(204000) + filler))).toEqual({ pct: 75, model: null });
  });

  it('reads an unchanged file once, and finds a session once while its file exists', () => {
    const path = rollout('30', 's2', record(136000));
    const tail = new RolloutTail(() => root);
    const target = [{ pane: '%1', session: 's2', storedAt: null }];
    const first = tail.collect(target, 1000, true);
    expect(first.map((w) => w.reading.pct)).toEqual([50]);
    expect(tail.collect(target, 2000, true)).toEqual([]);
    expect(tail.counts).toEqual({ walks: 1, reads: 1 });
    appendFileSync(path, record(190400));
    expect(tail.collect(target, 3000, true).map((w) => w.reading.pct)).toEqual([70]);
    expect(tail.counts).toEqual({ walks: 1, reads: 2 });
  });

  it('picks the newest file of the session across days, and no root means no tail', () => {
    const older = rollout('29', 's3', record(27200));
    utimesSync(older, new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
    const newer = rollout('30', 's3', record(54400));
    expect(findRollout(root, 's3')).toBe(newer);
    expect(findRollout(root, 'nobody')).toBeNull();
    expect(new RolloutTail(() => null).collect([{ pane: '%1', session: 's3', storedAt: null }], 1, true)).toEqual([]);
  });
});
