// A link is one bidirectional frame channel between a collector and a hub, whatever carries it:
// a WebSocket, an ssh exec channel's stdio, or an in-process pair (the hub's embedded collector).
// Frames are JSON text; each side decodes what it receives with shared/protocol.ts.

export interface FrameLink {
  /** Send one frame's JSON text. Sending on a closed link is a no-op. */
  send(text: string): void;
  /** Register the receiver of each frame's text. */
  onMessage(cb: (text: string) => void): void;
  /** Called once when the link ends, from either side. */
  onClose(cb: (reason: string) => void): void;
  close(reason?: string): void;
}

/** Two connected in-memory ends, for the embedded collector and for tests. */
export function linkPair(): [FrameLink, FrameLink] {
  type End = { msg: ((t: string) => void)[]; closed: ((r: string) => void)[]; open: boolean };
  const a: End = { msg: [], closed: [], open: true };
  const b: End = { msg: [], closed: [], open: true };
  const make = (self: End, peer: End): FrameLink => ({
    send(text) {
      if (!self.open) return;
      // Asynchronous like a socket, so neither side re-enters the other.
      queueMicrotask(() => peer.open && peer.msg.forEach((cb) => cb(text)));
    },
    onMessage(cb) {
      self.msg.push(cb);
    },
    onClose(cb) {
      self.closed.push(cb);
    },
    close(reason = 'closed') {
      for (const end of [self, peer]) {
        if (!end.open) continue;
        end.open = false;
        end.closed.forEach((cb) => cb(reason));
      }
    },
  });
  return [make(a, b), make(b, a)];
}
