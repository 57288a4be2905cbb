// The line protocol of a tmux control-mode client (`tmux -C`), as pure state.
//
// Replies come as `%begin T N F`, the output lines, then `%end T N F` or `%error T N F`.
// Output is not escaped, so a captured screen can contain a line that looks like `%end …`;
// only a closing line carrying the same time and number closes the block. Everything outside a
// block that starts with `%` is a notification.

export interface ControlBlock {
  type: 'block';
  time: string;
  number: string;
  flags: number;
  error: boolean;
  lines: string[];
}

export interface ControlNotification {
  type: 'notification';
  /** Without the `%`, e.g. `output`, `window-add`, `sessions-changed`, `exit`. */
  name: string;
  /** Everything after the name, unparsed. */
  args: string;
}

export type ControlMessage = ControlBlock | ControlNotification;

const BEGIN = /^%begin (\d+) (\d+) (\d+)$/;

export class ControlParser {
  private open: { time: string; number: string; flags: number; lines: string[] } | null = null;
  private closeEnd = '';
  private closeError = '';

  /** Feed one line (without its newline); returns the message it completes, if any. */
  push(line: string): ControlMessage | null {
    if (this.open) {
      const block = this.open;
      if (line === this.closeEnd || line === this.closeError) {
        this.open = null;
        return {
          type: 'block',
          time: block.time,
          number: block.number,
          flags: block.flags,
          error: line === this.closeError,
          lines: block.lines,
        };
      }
      block.lines.push(line);
      return null;
    }
    const begin = BEGIN.exec(line);
    if (begin) {
      const [, time = '', number = '', flags = '0'] = begin;
      this.open = { time, number, flags: Number(flags), lines: [] };
      const tail = `${time} ${number} ${flags}`;
      this.closeEnd = `%end ${tail}`;
      this.closeError = `%error ${tail}`;
      return null;
    }
    if (line.startsWith('%')) {
      const space = line.indexOf(' ');
      return space < 0
        ? { type: 'notification', name: line.slice(1), args: '' }
        : { type: 'notification', name: line.slice(1, space), args: line.slice(space + 1) };
    }
    // Anything else outside a block is noise (tmux prints none in -C mode).
    return null;
  }

  get inBlock(): boolean {
    return this.open !== null;
  }
}

/** A block's lines as the same text a one-shot tmux process would have printed. */
export function blockText(block: ControlBlock): string {
  return block.lines.map((l) => `${l}\n`).join('');
}

/** Splits a byte stream into lines; keeps the unfinished tail for the next chunk. */
export class LineSplitter {
  private rest = '';

  push(chunk: string): string[] {
    const text = this.rest + chunk;
    const lines = text.split('\n');
    this.rest = lines.pop() ?? '';
    return lines;
  }
}
