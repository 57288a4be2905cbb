// A private tmux server per test (its own -L socket, no user config), plus stand-in agents that
// run in its panes. Everything is torn down in kill(), which tests call in afterEach.

import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

// Compiled under dist/ (benchmarks use this harness too), the repository is one level further up.
const HERE = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const REPO = basename(HERE) === 'dist' ? dirname(HERE) : HERE;
export const FIXTURES = join(REPO, 'test/fixtures');
const STANDIN = join(REPO, 'test/support/standin.py');
const PYTHON = '/usr/bin/python3';

export interface StandIn {
  pane: string;
  /** Paint another fixture (a file name in test/fixtures, or an absolute path); resolves once it shows. */
  paint(fixture: string): Promise<void>;
  /** Bytes the stand-in has received so far. */
  keys(): string;
  /** End the stand-in process; the pane's shell stays. */
  exit(): void;
}

export class ScratchTmux {
  readonly name: string;
  readonly dir: string;
  private readonly bin: string;

  constructor(label = 't') {
    this.name = `tma-${label}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
    this.dir = mkdtempSync(join(tmpdir(), 'tma-test-'));
    this.bin = join(this.dir, 'bin');
    mkdirSync(this.bin);
    // An empty shell environment keeps panes quick and predictable.
    writeFileSync(join(this.dir, 'rc'), 'PS1="$ "\n');
  }

  tmux(...args: string[]): string {
    return execFileSync('tmux', ['-u', '-L', this.name, '-f', '/dev/null', ...args], {
      encoding: 'utf8',
      timeout: 5000,
      env: { ...process.env, TMUX: '' },
    });
  }

  /** Start the server with one session; returns its first pane id. */
  start(session = 'main'): string {
    this.tmux('new-session', '-d', '-s', session, '-x', '80', '-y', '24', `bash --rcfile ${join(this.dir, 'rc')} --noprofile -i`);
    return this.tmux('display-message', '-p', '-t', session, '#{pane_id}').trim();
  }

  /** A fresh window running a shell; returns its pane id. */
  newPane(session = 'main'): string {
    return this.tmux('new-window', '-d', '-P', '-F', '#{pane_id}', '-t', `${session}:`, `bash --rcfile ${join(this.dir, 'rc')} --noprofile -i`).trim();
  }

  private link(command: string): string {
    const p = join(this.bin, command);
    if (!existsSync(p)) symlinkSync(PYTHON, p);
    return p;
  }

  /**
   * Run a stand-in named `command` in `pane`, painting `fixture`. Resolves once the pane's
   * foreground command is the stand-in and its title is set.
   */
  async standIn(
    pane: string,
    command: string,
    fixture: string,
    opts: {
      afterKey?: { fixture: string; delayMs: number };
      paintMarks?: boolean;
      /**
       * Start it as `bash -c '<stand-in>; exec bash'` (how people wrap an agent): the shell leads the
       * foreground process group, so tmux names `bash` as the pane's command.
       */
      wrapper?: boolean;
    } = {},
  ): Promise<StandIn> {
    const id = pane.slice(1);
    const control = join(this.dir, `control-${id}`);
    const keylog = join(this.dir, `keys-${id}`);
    const fixturePath = (f: string) => (f.startsWith('/') ? f : join(FIXTURES, f));
    writeFileSync(control, fixturePath(fixture));
    writeFileSync(keylog, '');
    const exe = this.link(command);
    const a = opts.afterKey;
    const prefix =
      (a ? `STANDIN_AFTER_KEY=${fixturePath(a.fixture)} STANDIN_AFTER_KEY_DELAY=${a.delayMs / 1000} ` : '') + (opts.paintMarks ? 'STANDIN_PAINT_MARKS=1 ' : '');
    const run = `${prefix}${exe} ${STANDIN} ${control} ${keylog}`;
    const line = opts.wrapper ? `bash -c '${run}; exec bash --rcfile ${join(this.dir, 'rc')} --noprofile -i'` : run;
    this.tmux('send-keys', '-t', pane, line, 'Enter');
    const title = readFileSync(fixturePath(fixture), 'utf8').match(/^# title: ?(.*)$/m)?.[1] ?? '';
    await waitFor(() => {
      const [cmd, t] = this.tmux('display-message', '-p', '-t', pane, '#{pane_current_command}\u001f#{pane_title}').trim().split('\u001f');
      return cmd === (opts.wrapper ? 'bash' : command) && t === title.trim();
    }, `stand-in ${command} in ${pane}`);
    return {
      pane,
      paint: async (f) => {
        writeFileSync(control, fixturePath(f));
        const marker = lastLine(fixturePath(f));
        await waitFor(() => this.tmux('capture-pane', '-p', '-t', pane).includes(marker), `${f} painted in ${pane}`);
      },
      keys: () => readFileSync(keylog, 'utf8'),
      exit: () => writeFileSync(control, 'exit'),
    };
  }

  kill(): void {
    // kill-server racing a departing control-mode client can leave the server running with its
    // socket gone: end the process itself too, so no test leaves a server behind.
    const pid = Number(spawnSync('tmux', ['-L', this.name, 'display-message', '-p', '#{pid}'], { timeout: 5000, encoding: 'utf8' }).stdout?.trim());
    spawnSync('tmux', ['-L', this.name, 'kill-server'], { timeout: 5000 });
    if (Number.isInteger(pid) && pid > 0) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Already gone: the usual case.
      }
    }
    // tmux 3.3a leaves its socket file behind; a collector scanning the socket dir would see it.
    rmSync(this.socketPath(), { force: true });
    rmSync(this.dir, { recursive: true, force: true });
  }

  socketPath(): string {
    const base = process.env.TMUX_TMPDIR || '/tmp';
    return join(base, `tmux-${process.getuid?.() ?? 0}`, this.name);
  }

  /** Pane option value, '' when unset. */
  option(pane: string, key: string): string {
    return this.tmux('show-options', '-pqv', '-t', pane, key).replace(/\n$/, '');
  }
}

/** The last non-blank line of a fixture's screen, escapes removed: proof it was painted. */
function lastLine(path: string): string {
  const screen = readFileSync(path, 'utf8').split('\n---\n')[1] ?? '';
  const lines = screen
    .replace(/\x1b\[[0-9;?]*[@-~]/g, '')
    .split('\n')
    .map((l) => l.trimEnd())
    .filter((l) => l.trim());
  return (lines[lines.length - 1] ?? '').trim();
}

export async function waitFor(cond: () => boolean, what: string, timeoutMs = 8000): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    let ok = false;
    try {
      ok = cond();
    } catch {
      ok = false;
    }
    if (ok) return;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Run the built CLI (`node bin/tma.js`) as a user would. */
export function tma(args: string[], opts: { env?: NodeJS.ProcessEnv; input?: string; timeoutMs?: number } = {}): Promise<CliResult> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [join(REPO, 'bin/tma.js'), ...args], {
      env: { ...process.env, TMUX: '', TMUX_PANE: '', XDG_CONFIG_HOME: join(tmpdir(), 'tma-test-no-config'), ...opts.env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 15000);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      done({ code: code ?? (signal ? 128 : 1), stdout, stderr });
    });
    child.stdin.end(opts.input ?? '');
  });
}
