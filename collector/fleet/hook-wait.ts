// The two clients of the hook lane's wake-socket lines (wake.ts): a PermissionRequest hook that
// waits for its answer (`TMAP`), and an `act` outside the collector that answers it or withdraws it
// for the key lane (`TMAA`). Neither throws: a missing collector is an answer too.

import { createConnection, type Socket } from 'node:net';
import { ACK, ALLOW, ANSWER_MAGIC, DENY, NAK, PERMISSION_MAGIC, type HookAnswerRequest, type PermissionWait } from './wake.js';

export type HookWaitEnd =
  /** Nobody took the request (no collector, or it refused it): the hook stamps by itself. */
  | { kind: 'not-taken' }
  /** The collector held the request and ended it without an answer: print nothing. */
  | { kind: 'withdrawn' }
  | { kind: 'answer'; behavior: 'allow' | 'deny' };

/** Extra time past the wait for the collector's last byte: its own timer ends the request first. */
export const HOOK_WAIT_SLACK_MS = 3000;

/**
 * Hand a PermissionRequest to the collector and wait for its answer. The collector answers ACK
 * once it stamped and holds the request, then one byte: ALLOW, DENY, or NAK (withdrawn).
 */
export function waitForHookAnswer(path: string, w: PermissionWait, slackMs = HOOK_WAIT_SLACK_MS): Promise<HookWaitEnd> {
  return new Promise((done) => {
    let held = false;
    let s: Socket;
    try {
      s = createConnection(path);
    } catch {
      return done({ kind: 'not-taken' });
    }
    const t = setTimeout(() => finish(held ? { kind: 'withdrawn' } : { kind: 'not-taken' }), w.waitMs + slackMs);
    function finish(end: HookWaitEnd) {
      clearTimeout(t);
      s.destroy();
      done(end);
    }
    s.once('connect', () => s.write(`${PERMISSION_MAGIC}${JSON.stringify({ agent: w.agent, pane: w.pane, payload: w.payload, wait_ms: w.waitMs })}\n`));
    s.once('error', () => finish(held ? { kind: 'withdrawn' } : { kind: 'not-taken' }));
    s.on('data', (chunk: Buffer) => {
      for (const byte of chunk) {
        if (!held) {
          if (byte !== ACK) return finish({ kind: 'not-taken' });
          held = true;
          continue;
        }
        if (byte === ALLOW) return finish({ kind: 'answer', behavior: 'allow' });
        if (byte === DENY) return finish({ kind: 'answer', behavior: 'deny' });
        return finish({ kind: 'withdrawn' });
      }
    });
    s.once('end', () => finish(held ? { kind: 'withdrawn' } : { kind: 'not-taken' }));
  });
}

/**
 * Ask the collector to settle a pane's waiting hook: its byte (NAK from a collector without the
 * hook lane), `absent` when nobody listens (no collector, or a dead one's socket file), or
 * `timeout` when one listens but did not answer in time.
 */
export function askHookAnswer(path: string, a: HookAnswerRequest, timeoutMs = 2000): Promise<number | 'absent' | 'timeout'> {
  return new Promise((done) => {
    let s: Socket;
    let connected = false;
    try {
      s = createConnection(path);
    } catch {
      return done('absent');
    }
    const t = setTimeout(() => finish('timeout'), timeoutMs);
    function finish(v: number | 'absent' | 'timeout') {
      clearTimeout(t);
      s.destroy();
      done(v);
    }
    s.once('connect', () => {
      connected = true;
      s.write(`${ANSWER_MAGIC}${JSON.stringify({ pane: a.pane, behavior: a.behavior, request_id: a.requestId })}\n`);
    });
    s.once('error', () => finish(connected ? 'timeout' : 'absent'));
    s.on('data', (c: Buffer) => finish(c[0] ?? NAK));
    s.once('end', () => finish(connected ? 'timeout' : 'absent'));
  });
}
