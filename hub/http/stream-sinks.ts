// The two carriers of a fleet stream. Each watches its own backlog and reports a reader that has
// stopped reading; the stream hub decides what to do about it. Neither ever waits on the reader.

import type { ServerResponse } from 'node:http';
import type { WebSocket } from 'ws';
import type { SubscriberKind } from '../metrics.js';
import { closeReason } from '../link/ws.js';

/** Close code for a subscriber that fell behind (private-use range, stable for clients). */
export const CLOSE_TOO_SLOW = 4008;

export interface StreamSink {
  readonly kind: SubscriberKind;
  /**
   * Queue one JSON text (a Buffer holds it as UTF-8; an array of Buffers is one text in parts, so
   * a large document shared by many readers is queued without a copy per reader). Calls the
   * sink's slow callback when the reader is behind.
   */
  write(text: StreamText): void;
  /** Run `fn`'s writes as one: they reach the socket together, in one system call where it can. */
  batch?(fn: () => void): void;
  /** Queue a flush's lines (each one message), shared with the other readers of the group. */
  writeShared?(s: SharedLines): void;
  keepalive(): void;
  /** The backlog has drained enough that a paused reader can be sent a fresh document. */
  caughtUp(): boolean;
  /** Disconnect a reader that fell behind, saying why where the carrier can. */
  kick(reason: string): void;
  /** Orderly end (hub shutdown). */
  end(): void;
  onGone(cb: () => void): void;
}

export type StreamText = string | Buffer | readonly Buffer[];

/** The whole text of a `StreamText`, for callers that need it in one piece. */
export function streamTextString(t: StreamText): string {
  return typeof t === 'string' ? t : Buffer.isBuffer(t) ? t.toString('utf8') : Buffer.concat(t).toString('utf8');
}

/**
 * One flush's lines for a group of readers (same mode and selector), in the form each carrier
 * sends them, made once: every reader of the group gets the same bytes in one write, instead of
 * one message, one encoding and one system call per line per reader.
 */
export class SharedLines {
  private ws: Buffer | null = null;
  private sse: Buffer | null = null;

  constructor(readonly lines: readonly StreamText[]) {}

  /** The lines as unmasked WebSocket text frames (RFC 6455 §5.2), back to back. */
  wsFrames(): Buffer {
    this.ws ??= Buffer.concat(
      this.lines.flatMap((l) => {
        const data = textBytes(l);
        return [frameHeader(data.length), data];
      }),
    );
    return this.ws;
  }

  sseEvents(): Buffer {
    this.sse ??= Buffer.concat(this.lines.flatMap((l) => [SSE_DATA, textBytes(l), SSE_END]));
    return this.sse;
  }
}

function textBytes(t: StreamText): Buffer {
  return typeof t === 'string' ? Buffer.from(t, 'utf8') : Buffer.isBuffer(t) ? t : Buffer.concat(t);
}

/** Header of a final, unmasked text frame (what a server sends) carrying `length` bytes. */
function frameHeader(length: number): Buffer {
  if (length < 126) return Buffer.from([0x81, length]);
  if (length < 65536) {
    const h = Buffer.alloc(4);
    h[0] = 0x81;
    h[1] = 126;
    h.writeUInt16BE(length, 2);
    return h;
  }
  const h = Buffer.alloc(10);
  h[0] = 0x81;
  h[1] = 127;
  h.writeBigUInt64BE(BigInt(length), 2);
  return h;
}

export interface SinkLimits {
  /** Unread backlog, in bytes, past which a reader is dropped when the next message is due. */
  maxBufferedBytes: number;
  /** How long an SSE response may refuse writes before its reader is dropped. */
  drainTimeoutMs: number;
}

interface Corkable {
  cork(): void;
  uncork(): void;
}

/** Run `fn`'s writes as one: they reach the socket together, in one system call where it can. */
function corked(w: Corkable | undefined, fn: () => void): void {
  if (!w) return fn();
  w.cork();
  try {
    fn();
  } finally {
    w.uncork();
  }
}

/** ws keeps its socket private; corking it lets several sends leave in one write. */
const wsSocket = (ws: WebSocket) => (ws as unknown as { _socket?: Corkable & { write(b: Buffer): boolean } })._socket;

export function wsSink(ws: WebSocket, limits: SinkLimits, slow: (reason: string) => void): StreamSink {
  const over = () => ws.bufferedAmount > limits.maxBufferedBytes;
  return {
    kind: 'ws',
    write(text) {
      if (ws.readyState !== ws.OPEN) return;
      // Judged before queueing, so one large document is never a fault on its own; unread
      // earlier messages are.
      if (over()) {
        slow(`send backlog ${ws.bufferedAmount} bytes over ${limits.maxBufferedBytes}`);
        return;
      }
      if (typeof text === 'string' || Buffer.isBuffer(text)) {
        ws.send(text, { binary: false });
        return;
      }
      // One text message in fragments: each part is queued as it is, shared with other readers,
      // and the socket takes them in one write.
      corked(wsSocket(ws), () => text.forEach((part, i) => ws.send(part, { binary: false, fin: i === text.length - 1 })));
    },
    batch(fn) {
      corked(wsSocket(ws), fn);
    },
    writeShared(shared) {
      if (ws.readyState !== ws.OPEN) return;
      if (over()) {
        slow(`send backlog ${ws.bufferedAmount} bytes over ${limits.maxBufferedBytes}`);
        return;
      }
      const sock = wsSocket(ws);
      // The frames go straight to the socket, behind whatever ws queued there before. Only without
      // extensions: a compressed link's frames are ws's to make.
      if (sock && ws.extensions === '') sock.write(shared.wsFrames());
      else corked(sock, () => shared.lines.forEach((l) => ws.send(typeof l === 'string' || Buffer.isBuffer(l) ? l : Buffer.concat(l), { binary: false })));
    },
    keepalive() {
      if (ws.readyState === ws.OPEN) ws.ping();
    },
    caughtUp() {
      return ws.readyState === ws.OPEN && ws.bufferedAmount <= limits.maxBufferedBytes / 4;
    },
    kick(reason) {
      ws.close(CLOSE_TOO_SLOW, closeReason(`too slow: ${reason}`));
      // The close frame queues behind the backlog the reader is not taking: do not wait for it.
      setTimeout(() => ws.terminate(), 1000).unref();
    },
    end() {
      ws.close(1001, 'hub shutting down');
      setTimeout(() => ws.terminate(), 1000).unref();
    },
    onGone(cb) {
      ws.on('close', cb);
    },
  };
}

const SSE_DATA = Buffer.from('data: ');
const SSE_END = Buffer.from('\n\n');

export function sseSink(res: ServerResponse, limits: SinkLimits, slow: (reason: string) => void): StreamSink {
  let stalled: NodeJS.Timeout | null = null;
  /** One message's chunks, judged once so a message is never cut between its parts. */
  const push = (chunks: readonly (string | Buffer)[]) => {
    if (res.destroyed || res.writableEnded) return;
    if (res.writableLength > limits.maxBufferedBytes) {
      slow(`send backlog ${res.writableLength} bytes over ${limits.maxBufferedBytes}`);
      return;
    }
    let ok = true;
    corked(res, () => {
      for (const c of chunks) ok = res.write(c);
    });
    if (!ok && !stalled) {
      stalled = setTimeout(() => slow(`stream not drained within ${limits.drainTimeoutMs} ms`), limits.drainTimeoutMs);
      stalled.unref();
      res.once('drain', () => {
        if (stalled) clearTimeout(stalled);
        stalled = null;
      });
    }
  };
  const stop = () => {
    if (stalled) clearTimeout(stalled);
    stalled = null;
  };
  return {
    kind: 'sse',
    write(text) {
      if (typeof text === 'string') {
        push([`data: ${text}\n\n`]);
        return;
      }
      push([SSE_DATA, ...(Buffer.isBuffer(text) ? [text] : text), SSE_END]);
    },
    batch(fn) {
      corked(res, fn);
    },
    writeShared(shared) {
      push([shared.sseEvents()]);
    },
    keepalive() {
      push([': keepalive\n\n']);
    },
    caughtUp() {
      return !res.destroyed && stalled === null && res.writableLength <= limits.maxBufferedBytes / 4;
    },
    kick() {
      // SSE has no close code; a reader that is not reading could not see one anyway.
      stop();
      res.destroy();
    },
    end() {
      stop();
      res.end();
    },
    onGone(cb) {
      res.on('close', () => {
        stop();
        cb();
      });
    },
  };
}
