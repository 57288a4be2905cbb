// One tmux process per call. Costs a few milliseconds of spawn each time, but needs nothing to
// be attached and always works, including against a server with no session.

import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { TmuxError, errorFromStderr } from './errors.js';
import { chainArgv, splitChain } from './command-syntax.js';
import { globalArgs, type ServerTarget } from './target.js';
import { DEFAULT_TIMEOUT_MS, type Env, type RunOptions, type TmuxRunner } from './runner-types.js';

export interface SpawnRunnerOptions {
  target: ServerTarget;
  bin: string;
  env?: Env;
}

export class SpawnRunner implements TmuxRunner {
  readonly mode = 'spawn' as const;
  private readonly bin: string;
  private readonly global: string[];
  private readonly env: Env;

  constructor(opts: SpawnRunnerOptions) {
    this.bin = opts.bin;
    this.global = globalArgs(opts.target);
    this.env = opts.env ?? process.env;
  }

  run(argv: string[], opts: RunOptions = {}): Promise<string> {
    return this.exec(chainArgv(splitChain(argv)), opts);
  }

  /**
   * A single process keeps the chain atomic, but tmux prints all outputs into one stream; a
   * marker line printed between commands (random, so no screen can forge it) tells them apart.
   */
  async runChain(cmds: string[][], opts: RunOptions = {}): Promise<string[]> {
    if (cmds.length === 0) return [];
    const marker = `__tma_split_${randomBytes(8).toString('hex')}`;
    const withMarkers: string[][] = [];
    cmds.forEach((cmd, i) => {
      if (i > 0) withMarkers.push(['display-message', '-p', marker]);
      withMarkers.push(cmd);
    });
    const out = await this.exec(chainArgv(withMarkers), opts);
    return splitOnMarker(out, marker, cmds.length);
  }

  close(): void {
    // Nothing is kept open between calls.
  }

  private exec(args: string[], opts: RunOptions): Promise<string> {
    const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    return new Promise<string>((resolve, reject) => {
      const child = spawn(this.bin, [...this.global, ...args], {
        env: this.env,
        stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      let done = false;
      const finish = (err: TmuxError | null, value = ''): void => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        if (err) reject(err);
        else resolve(value);
      };
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        finish(new TmuxError('timeout', stderr.trim(), `tmux did not answer within ${timeoutMs} ms`));
      }, timeoutMs);
      // Both are pipes by construction (stdio above); the check only satisfies the types.
      if (child.stdout && child.stderr) {
        child.stdout.setEncoding('utf8');
        child.stderr.setEncoding('utf8');
        child.stdout.on('data', (d: string) => (stdout += d));
        child.stderr.on('data', (d: string) => (stderr += d));
      }
      child.on('error', (e) => {
        finish(new TmuxError('failed', '', `cannot run ${this.bin}: ${e.message}`));
      });
      child.on('close', (code, signal) => {
        if (code === 0) finish(null, stdout);
        else if (stderr.trim() !== '') finish(errorFromStderr(stderr));
        else finish(new TmuxError('failed', '', `tmux exited with ${code ?? signal}`));
      });
      if (opts.input !== undefined && child.stdin) {
        // A child that exits without reading its stdin must not crash us with EPIPE.
        child.stdin.on('error', () => {});
        child.stdin.end(opts.input);
      }
    });
  }
}

/** Cut one stdout back into per-command outputs at the marker lines. */
export function splitOnMarker(out: string, marker: string, expected: number): string[] {
  const parts: string[] = [];
  const line = `${marker}\n`;
  let start = 0;
  let from = 0;
  while (parts.length < expected - 1) {
    const at = out.indexOf(line, from);
    if (at < 0) break;
    // Outputs end in a newline, so a real marker always starts a line.
    if (at === start || out[at - 1] === '\n') {
      parts.push(out.slice(start, at));
      start = at + line.length;
    }
    from = at + line.length;
  }
  parts.push(out.slice(start));
  if (parts.length !== expected) {
    throw new TmuxError('failed', '', `expected ${expected} outputs from a chain, got ${parts.length}`);
  }
  return parts;
}
