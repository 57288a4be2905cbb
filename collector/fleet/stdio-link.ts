// The same frames over a pipe pair, one JSON object per line: how the hub's ssh transport talks
// to `tma collector --stdio`. End of input ends the link.

import type { Readable, Writable } from 'node:stream';
import type { FrameLink } from '../../shared/link.js';
import { MAX_FRAME_BYTES } from '../../shared/protocol.js';

export function stdioLink(input: Readable, output: Writable): FrameLink {
  const msg: ((t: string) => void)[] = [];
  const closed: ((r: string) => void)[] = [];
  let open = true;
  let buf = '';
  const end = (reason: string) => {
    if (!open) return;
    open = false;
    closed.forEach((cb) => cb(reason));
  };
  input.setEncoding('utf8');
  input.on('data', (chunk: string) => {
    buf += chunk;
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl).replace(/\r$/, '');
      buf = buf.slice(nl + 1);
      if (open && line.trim() !== '') msg.forEach((cb) => cb(line));
    }
    // A line that never ends would grow without bound; hand it on so it is rejected as too large.
    if (buf.length > MAX_FRAME_BYTES * 2) {
      const line = buf;
      buf = '';
      if (open) msg.forEach((cb) => cb(line));
    }
  });
  input.on('end', () => end('end of input'));
  input.on('error', (e) => end(e.message));
  output.on('error', (e) => end(e.message));
  return {
    send(text) {
      if (open) output.write(`${text}\n`);
    },
    onMessage(cb) {
      msg.push(cb);
    },
    onClose(cb) {
      closed.push(cb);
    },
    close(reason = 'closed') {
      end(reason);
    },
  };
}
