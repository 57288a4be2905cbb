// The --slot ledger: one file per (slot, tmux server). The file is created exclusively before
// anything fires, so of two calls with one slot exactly one fires; the other replays what the
// ledger says, and where it cannot tell whether the first fire landed, it says so.

import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { OUTCOMES, actResult, type ActReason, type ActResult } from './outcome.js';

type Env = Readonly<Record<string, string | undefined>>;

export function receiptsDir(env: Env): string {
  const xdg = env['XDG_STATE_HOME'];
  const base = xdg && isAbsolute(xdg) ? xdg : join(env['HOME'] || homedir(), '.local', 'state');
  return join(base, 'tma', 'receipts');
}

/** The same slot on two servers is two dispatches; the name never reveals the slot. */
export function receiptName(slot: string, socketPath: string): string {
  return createHash('sha256').update(slot).update('\u0000').update(socketPath).digest('hex') + '.json';
}

export type Claim = { kind: 'claimed'; path: string } | { kind: 'replay'; path: string; result: ActResult };

/**
 * What a second call with a slot returns, from the ledger text (null: unreadable). A final
 * result replays as itself with `cached: true`; an error, an in-flight record or garbage become
 * `error`/`fired-unknown`, because the first fire may have delivered its keys.
 */
export function replayFromLedger(text: string | null, action: string, pane: string): ActResult {
  const unknown = (a: string, p: string): ActResult => ({ ...actResult(a, p, 'error', 'fired-unknown'), cached: true });
  let doc: unknown;
  try {
    doc = text === null ? null : JSON.parse(text);
  } catch {
    return unknown(action, pane);
  }
  if (typeof doc !== 'object' || doc === null) return unknown(action, pane);
  const d = doc as Record<string, unknown>;
  const a = typeof d.action === 'string' ? d.action : action;
  const p = typeof d.pane === 'string' ? d.pane : pane;
  if (d.status !== 'final' || typeof d.result !== 'object' || d.result === null) return unknown(a, p);
  const r = d.result as Record<string, unknown>;
  if (
    typeof r.action !== 'string' ||
    typeof r.pane !== 'string' ||
    typeof r.exit_code !== 'number' ||
    !(OUTCOMES as readonly unknown[]).includes(r.outcome) ||
    !(r.reason === null || typeof r.reason === 'string')
  ) {
    return unknown(a, p);
  }
  if (r.outcome === 'error') return unknown(r.action, r.pane);
  return {
    schema: 1,
    action: r.action,
    pane: r.pane,
    outcome: r.outcome as ActResult['outcome'],
    exit_code: r.exit_code,
    reason: r.reason as ActReason | null,
    cached: true,
  };
}

export function receiptPath(dir: string, slot: string, socketPath: string): string {
  return join(dir, receiptName(slot, socketPath));
}

function readLedger(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

/** What the ledger at `path` replays right now. */
export function readReplay(path: string, action: string, pane: string): ActResult {
  return replayFromLedger(readLedger(path), action, pane);
}

/** Whether the ledger still holds the in-flight record of a fire that has not finished. */
export function isInFlightRecord(path: string): boolean {
  const text = readLedger(path);
  if (text === null) return false;
  try {
    return (JSON.parse(text) as { status?: unknown }).status === 'in-flight';
  } catch {
    return false;
  }
}

/** Claim a slot (exclusive create), or read back what an earlier call with it recorded. */
export function claimSlot(dir: string, slot: string, socketPath: string, action: string, pane: string): Claim {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const path = join(dir, receiptName(slot, socketPath));
  try {
    writeFileSync(path, JSON.stringify({ status: 'in-flight', action, pane }) + '\n', { flag: 'wx', mode: 0o600 });
    return { kind: 'claimed', path };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
  let text: string | null;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    text = null;
  }
  return { kind: 'replay', path, result: replayFromLedger(text, action, pane) };
}

/** Replace the in-flight record with the final result; a reader sees one or the other, whole. */
export function recordResult(path: string, result: ActResult): void {
  const { cached: _cached, ...stored } = result;
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(tmp, JSON.stringify({ status: 'final', action: result.action, pane: result.pane, result: stored }) + '\n', { mode: 0o600 });
  renameSync(tmp, path);
}
