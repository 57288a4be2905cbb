import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { REPO, type CliResult } from './scratch-tmux.js';

// What the terminal-hostile tests send and look for, and which verb each covers. Every verb of
// cli/verb-table.ts has a line in VERB_COVERAGE (test/unit/hostile-verb-coverage.test.ts pins it
// against the table): a verb added later fails until someone says where its printed fields are
// proven safe, or why it prints none from a host or hub.

/** ESC [2J (clear), OSC 52 (clipboard write), OSC 0 (title), CR, a C1 CSI, a bidi override. */
export const EVIL = 'a\x1b[2J\x1b]52;c;ZXZpbA==\x07\x1b]0;pwned\x07\r\x9b31m\u202eb';

/** C0 but newline and tab (the text forms' separators; a field's own tabs are escaped), DEL, C1, bidi controls. */
export const RAW = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;

/** Pieces of EVIL that act on a terminal, for output a view paints with its own escapes. */
export const EVIL_RAW_PARTS = ['\x1b]52;', '\x1b]0;pwned', '\x9b31m', '\u202e'];

export type Coverage =
  /** Proven in both hostile tests: fleet-terminal-hostile and local-terminal-hostile. */
  | 'fleet+local'
  /** Only the fleet form prints host fields (the local form has none or does not exist). */
  | 'fleet'
  /** Only the local form prints pane fields (or the verb reads this machine's files: `hub clients`). */
  | 'local'
  /** Prints no field a host or hub sent; the reason is the string. */
  | { none: string };

export const VERB_COVERAGE: Record<string, Coverage> = {
  ls: 'fleet+local',
  status: 'fleet+local',
  wait: 'fleet+local',
  subscribe: 'fleet+local',
  doctor: 'fleet+local',
  act: 'fleet+local',
  watch: 'fleet+local',
  pick: 'fleet+local',
  mute: 'fleet+local',
  jump: 'fleet+local',
  debug: 'local',
  forget: 'fleet',
  hub: 'local',
  collector: { none: 'logs its own events as JSON lines or escaped text; a row goes to the hub, never to its terminal' },
  version: { none: 'prints its own version' },
  init: { none: 'prints what it wires on this machine (paths, agent names on $PATH) and then runs doctor, covered above' },
  'install-hooks': { none: "prints diffs of this machine's own config files" },
  'install-keys': { none: "prints this machine's tmux.conf lines" },
  completions: { none: 'prints a fixed script' },
  help: { none: 'prints fixed usage text' },
  event: { none: 'prints nothing (a hook never fails its agent)' },
  'clear-attention': { none: 'prints nothing' },
  supervise: { none: "prints nothing but the supervised command's own output" },
};

/** Verbs a test of this kind must have at least one case for. */
export function verbsCovered(kind: 'fleet' | 'local'): string[] {
  return Object.entries(VERB_COVERAGE)
    .filter(([, c]) => c === 'fleet+local' || c === kind)
    .map(([v]) => v);
}

/**
 * `tma <args>` on a real pseudo-terminal (script(1)), ended after `secs`: all it wrote. For the
 * views (watch, the picker, the act menu) and the table form of ls, which need a terminal.
 */
export function onTerminal(args: string[], env: NodeJS.ProcessEnv, secs: number): Promise<CliResult> {
  const cmd = [process.execPath, join(REPO, 'bin/tma.js'), ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  return new Promise<CliResult>((done) => {
    const child = spawn('timeout', ['-s', 'TERM', String(secs), 'script', '-q', '-f', '-c', cmd, '/dev/null'], {
      env: { ...process.env, ...env, TMUX: '', TMUX_PANE: '', TERM: 'xterm-256color' },
    });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
    child.on('close', (code) => done({ code: code ?? 1, stdout, stderr: '' }));
    child.stdin.end();
  });
}
