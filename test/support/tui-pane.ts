// A terminal view (watch, the picker, the act menu) running in a pane of a scratch tmux server,
// driven as a person would: keys through send-keys, the screen read back with capture-pane.

import { join } from 'node:path';
import { REPO, waitFor, type ScratchTmux } from './scratch-tmux.js';

export interface TuiPane {
  pane: string;
  screen(): string;
  /** Wait until the screen satisfies `cond`; returns that screen. */
  until(cond: (screen: string) => boolean, what: string, timeoutMs?: number): Promise<string>;
  keys(...keys: string[]): void;
  /** Start a command line at the pane's shell prompt. */
  type(line: string): void;
}

/** A shell in a window of its own (session `tui`), sized like a small terminal. */
export function tuiPane(s: ScratchTmux, cols = 150, rows = 40): TuiPane {
  s.tmux('new-session', '-d', '-s', 'tui', '-x', String(cols), '-y', String(rows), `bash --rcfile ${join(s.dir, 'rc')} --noprofile -i`);
  const pane = s.tmux('display-message', '-p', '-t', 'tui', '#{pane_id}').trim();
  const screen = () => s.tmux('capture-pane', '-p', '-t', pane);
  return {
    pane,
    screen,
    until: async (cond, what, timeoutMs = 8000) => {
      let last = '';
      try {
        await waitFor(() => cond((last = screen())), what, timeoutMs);
      } catch (e) {
        throw new Error(`${(e as Error).message}; the screen was:\n${last}`);
      }
      return last;
    },
    keys: (...keys) => s.tmux('send-keys', '-t', pane, ...keys),
    type: (line) => s.tmux('send-keys', '-t', pane, '-l', line),
  };
}

/** The command line that runs the built CLI with an isolated environment. */
export function tmaLine(env: Record<string, string>, args: string[]): string {
  const vars = Object.entries(env).map(([k, v]) => `${k}=${shq(v)}`);
  return `env ${vars.join(' ')} ${shq(process.execPath)} ${shq(join(REPO, 'bin/tma.js'))} ${args.map(shq).join(' ')}`;
}

const shq = (s: string) => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(s) ? s : `'${s.replaceAll("'", "'\\''")}'`);
