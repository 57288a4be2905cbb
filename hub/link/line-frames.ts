// Cuts a byte stream into lines: the stdio form of the protocol is one JSON frame per line.

import { MAX_FRAME_BYTES } from '../../shared/protocol.js';

export class LineSplitter {
  private buf = '';

  constructor(private readonly maxLine = MAX_FRAME_BYTES * 2) {}

  /** Complete, non-blank lines in `chunk` (with what was held back before it). */
  push(chunk: string): string[] {
    this.buf += chunk;
    const out: string[] = [];
    let nl: number;
    while ((nl = this.buf.indexOf('\n')) >= 0) {
      const line = this.buf.slice(0, nl).replace(/\r$/, '');
      this.buf = this.buf.slice(nl + 1);
      if (line.trim() !== '') out.push(line);
    }
    // A line that never ends would grow without bound: hand it on so the protocol layer refuses
    // it as too large, rather than holding it.
    if (this.buf.length > this.maxLine) {
      out.push(this.buf);
      this.buf = '';
    }
    return out;
  }
}
