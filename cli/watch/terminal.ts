// The thin shell between the pure views and a real terminal: the alternate screen, a hidden
// cursor and raw input while a view runs, and all three put back however it ends (quit, a signal,
// a crash). A frame is written only when it differs from the last one, line by line.
//
// When the terminal goes away (its tmux server killed, an ssh link dropped: SIGHUP, or EIO/EPIPE
// on stdin or stdout) nothing is put back, since there is nothing to put it on, and the process
// ends with 129. Node restores at exit the modes of every stdio descriptor that was a terminal
// when it started, and a hung-up terminal refuses that with an assertion; so those descriptors are
// closed first and Node skips them.

import { closeSync } from 'node:fs';

export interface Screen {
  readonly cols: number;
  readonly rows: number;
  draw(lines: readonly string[]): void;
  /** Put the terminal back as it was; safe to call more than once. */
  restore(): void;
}

const ENTER = '\x1b[?1049h\x1b[?25l\x1b[H\x1b[2J';
const LEAVE = '\x1b[0m\x1b[?25h\x1b[?1049l';

/** Exit code when the terminal hung up: as if SIGHUP had ended the process. */
export const HANGUP_EXIT = 129;

/** Errors that mean the terminal is gone rather than a fault of ours. */
const GONE_CODES = new Set(['EIO', 'EPIPE', 'ENXIO', 'EBADF', 'ECONNRESET']);

export function openScreen(opts: { onKeys: (data: string) => void; onResize: () => void }): Screen {
  const out = process.stdout;
  const inp = process.stdin;
  let last: string[] = [];
  let restored = false;
  let gone = false;
  const wasRaw = inp.isTTY ? inp.isRaw : false;
  // Which descriptors Node will try to put back at exit (it noted them at start).
  const ttyFds = [inp.isTTY, out.isTTY, process.stderr.isTTY].flatMap((tty, fd) => (tty ? [fd] : []));

  const onData = (d: Buffer | string) => opts.onKeys(typeof d === 'string' ? d : d.toString('utf8'));
  const onResize = () => {
    last = [];
    opts.onResize();
  };
  const restore = () => {
    if (restored) return;
    restored = true;
    inp.off('data', onData);
    out.off('resize', onResize);
    inp.off('end', onGone);
    inp.pause();
    if (!gone) {
      try {
        if (inp.isTTY) inp.setRawMode(wasRaw);
        out.write(LEAVE);
      } catch {
        // The terminal is gone; nothing left to restore.
      }
    }
    for (const [sig, h] of handlers) process.off(sig, h);
    process.off('exit', restore);
    process.off('uncaughtException', crash);
    process.off('unhandledRejection', crash);
  };
  /** The terminal hung up: leave without touching it, and without Node's assertion at exit. */
  const hangUp = () => {
    gone = true;
    restore();
    for (const fd of ttyFds) {
      try {
        closeSync(fd);
      } catch {
        // Already closed.
      }
    }
    process.exit(HANGUP_EXIT);
  };
  const onGone = () => hangUp();
  const onStreamError = (e: NodeJS.ErrnoException) => {
    if (GONE_CODES.has(e.code ?? '')) hangUp();
    else crash(e);
  };
  const crash = (e: unknown) => {
    if (GONE_CODES.has((e as NodeJS.ErrnoException)?.code ?? '') && !restored) return hangUp();
    restore();
    if (!gone) process.stderr.write(`tma: ${(e as Error)?.stack ?? String(e)}\n`);
    process.exit(1);
  };
  const handlers: [NodeJS.Signals, () => void][] = (['SIGTERM', 'SIGHUP', 'SIGINT'] as const).map((sig) => [
    sig,
    sig === 'SIGHUP'
      ? hangUp
      : () => {
          restore();
          process.exit(128 + (sig === 'SIGINT' ? 2 : 15));
        },
  ]);
  for (const [sig, h] of handlers) process.on(sig, h);
  // Kept after restore: a write still in flight may fail once the terminal is gone.
  inp.on('error', onStreamError);
  out.on('error', onStreamError);
  inp.on('end', onGone);
  process.on('exit', restore);
  process.on('uncaughtException', crash);
  process.on('unhandledRejection', crash);

  out.write(ENTER);
  if (inp.isTTY) inp.setRawMode(true);
  inp.setEncoding('utf8');
  inp.on('data', onData);
  inp.resume();
  out.on('resize', onResize);

  return {
    get cols() {
      return out.columns || 80;
    },
    get rows() {
      return out.rows || 24;
    },
    draw(lines) {
      if (restored) return;
      let buf = '';
      for (let i = 0; i < Math.max(lines.length, last.length); i++) {
        const l = lines[i] ?? '';
        if (l === last[i]) continue;
        buf += `\x1b[${i + 1};1H${l}\x1b[0m\x1b[K`;
      }
      last = [...lines];
      if (buf && !gone) out.write(buf);
    },
    restore,
  };
}
