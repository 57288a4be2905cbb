// A stream sink that keeps every text the hub writes to it, joined if it came in parts: what the
// stream unit tests read instead of a socket.
import { streamTextString, type StreamSink } from '../../hub/http/stream-sinks.js';

export function recordingSink(written: string[], caughtUp = () => true): StreamSink {
  return { kind: 'ws', write: (t) => written.push(streamTextString(t)), keepalive: () => {}, caughtUp, kick: () => {}, end: () => {}, onGone: () => {} };
}
