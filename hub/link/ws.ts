// A WebSocket as a FrameLink. Hub-initiated closes use 1008 (policy violation): the reason text
// says which policy, and the error frame sent just before says it in protocol terms.

import type { WebSocket } from 'ws';
import type { FrameLink } from '../../shared/link.js';

export const CLOSE_POLICY = 1008;
export const CLOSE_GOING_AWAY = 1001;

/** Close reasons are capped at 123 bytes by the WebSocket framing. */
export function closeReason(text: string): string {
  let out = text;
  while (Buffer.byteLength(out, 'utf8') > 123) out = out.slice(0, -1);
  return out;
}

export function wsFrameLink(ws: WebSocket, closeCode = CLOSE_POLICY): FrameLink {
  return {
    send(text) {
      if (ws.readyState === ws.OPEN) ws.send(text);
    },
    onMessage(cb) {
      ws.on('message', (data: Buffer | ArrayBuffer | Buffer[]) => {
        // A text message arrives as one Buffer: decoded in place, not copied first (once per message on a busy hub).
        const buf = Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
        cb(buf.toString('utf8'));
      });
    },
    onClose(cb) {
      ws.on('close', (code: number, reason: Buffer) => cb(reason.toString('utf8') || `socket closed (${code})`));
    },
    close(reason = 'closed by hub') {
      if (ws.readyState === ws.OPEN || ws.readyState === ws.CONNECTING) ws.close(closeCode, closeReason(reason));
    },
  };
}
