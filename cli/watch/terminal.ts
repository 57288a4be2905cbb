// The thin shell between the pure views and a real terminal: the alternate screen, a hidden
// cursor and raw input while a view runs, and all three put back however it ends (quit, a signal,
// a crash). A frame is written only when it differs from the last one, line by line.

export interface Screen {
  readonly cols: number;
  readonly rows: number;
  draw(lines: readonly string[]): void;
  /** Put the terminal back as it was; safe to call more than once. */
  restore(): void;
}

const ENTER = '\x1b[?1049h\x1b[?25l\x1b[H\x1b[2J';
const LEAVE = '\x1b[0m\x1b[?25h\x1b[?1049l';

export function openScreen(opts: { onKeys: (data: string) => void; onResize: () => void }): Screen {
  const out = process.stdout;
  const inp = process.stdin;
  let last: string[] = [];
  let restored = false;
  const wasRaw = inp.isTTY ? inp.isRaw : false;

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
    if (inp.isTTY) inp.setRawMode(wasRaw);
    inp.pause();
    try {
      out.write(LEAVE);
    } catch {
      // The terminal is gone; nothing left to restore.
    }
    for (const [sig, h] of handlers) process.off(sig, h);
    process.off('exit', restore);
    process.off('uncaughtException', crash);
    process.off('unhandledRejection', crash);
  };
  const crash = (e: unknown) => {
    restore();
    process.stderr.write(`tma: ${(e as Error)?.stack ?? String(e)}\n`);
    process.exit(1);
  };
  const handlers: [NodeJS.Signals, () => void][] = (['SIGTERM', 'SIGHUP', 'SIGINT'] as const).map((sig) => [
    sig,
    () => {
      restore();
      process.exit(128 + (sig === 'SIGHUP' ? 1 : sig === 'SIGINT' ? 2 : 15));
    },
  ]);
  for (const [sig, h] of handlers) process.on(sig, h);
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
      if (buf) out.write(buf);
    },
    restore,
  };
}
