// A long-lived control-mode client (`tmux -C attach-session`): commands go in on stdin, replies
// come back as %begin/%end blocks. About twenty times cheaper per command than a process each,
// which matters for a collector that lists and captures every pane every second.
//
// A control client has to be attached to a session, so this never creates one (it would show up
// as panes). It attaches to whatever session tmux picks, with `ignore-size` so it never shrinks
// anyone's windows, and re-attaches after its session goes away. While it cannot attach (no
// server, or a server with no session), calls go through one-shot processes instead.

import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { randomBytes } from 'node:crypto';
import { TmuxError, errorFromStderr, isServerGone } from './errors.js';
import { controlLine, splitChain } from './command-syntax.js';
import { ControlParser, LineSplitter, blockText, type ControlBlock, type ControlNotification } from './control-parser.js';
import { SpawnRunner } from './spawn-runner.js';
import { globalArgs, type ServerTarget } from './target.js';
import { DEFAULT_TIMEOUT_MS, type Env, type RunOptions, type TmuxRunner } from './runner-types.js';

export interface ControlRunnerOptions {
  target: ServerTarget;
  bin: string;
  env?: Env;
  /** Deliver %output notifications (off by default: every painted byte would cross the pipe). */
  output?: boolean;
  /** Attach to this session (`$N`); tmux reports %output only for the attached session's windows. */
  session?: string;
  /** After a failed attach, one-shot processes are used for this long before trying again. */
  reattachIntervalMs?: number;
  attachTimeoutMs?: number;
}

export interface ControlClosed {
  /** The %exit reason, or how the client process ended. */
  reason: string;
  /** Set once known; pending calls failed with this kind. */
  kind: TmuxError['kind'];
}

export interface ControlRunnerEvents {
  notification: [ControlNotification];
  attached: [];
  closed: [ControlClosed];
}

export class ControlRunner extends EventEmitter<ControlRunnerEvents> implements TmuxRunner {
  readonly mode = 'control' as const;
  private readonly opts: Required<Omit<ControlRunnerOptions, 'env' | 'session'>> & { env: Env; session: string | null };
  private readonly oneShot: SpawnRunner;
  private conn: ControlConnection | null = null;
  private connecting: Promise<ControlConnection | null> | null = null;
  private lastFailedAttach = Number.NEGATIVE_INFINITY;
  private shut = false;

  constructor(opts: ControlRunnerOptions) {
    super();
    this.opts = {
      target: opts.target,
      bin: opts.bin,
      env: opts.env ?? process.env,
      output: opts.output ?? false,
      session: opts.session ?? null,
      reattachIntervalMs: opts.reattachIntervalMs ?? 1000,
      attachTimeoutMs: opts.attachTimeoutMs ?? DEFAULT_TIMEOUT_MS,
    };
    this.oneShot = new SpawnRunner(this.opts);
  }

  /** True while a control client is attached and answering. */
  get attached(): boolean {
    return this.conn !== null && this.conn.alive;
  }

  /** Try to attach now (ignoring the back-off); resolves with whether it worked. */
  async connect(): Promise<boolean> {
    this.lastFailedAttach = Number.NEGATIVE_INFINITY;
    return (await this.connection()) !== null;
  }

  async run(argv: string[], opts: RunOptions = {}): Promise<string> {
    const cmds = splitChain(argv);
    if (cmds.length === 0) return '';
    if (opts.input !== undefined) return this.oneShot.run(argv, opts);
    return (await this.request(cmds, opts)).join('');
  }

  runChain(cmds: string[][], opts: RunOptions = {}): Promise<string[]> {
    if (cmds.length === 0) return Promise.resolve([]);
    if (opts.input !== undefined) return this.oneShot.runChain(cmds, opts);
    return this.request(cmds, opts);
  }

  close(): void {
    this.shut = true;
    this.conn?.kill('closed by caller', new TmuxError('failed', '', 'tmux runner closed'));
    this.conn = null;
  }

  private async request(cmds: string[][], opts: RunOptions): Promise<string[]> {
    if (this.shut) throw new TmuxError('failed', '', 'tmux runner closed');
    const conn = await this.connection();
    if (conn === null) return this.oneShot.runChain(cmds, opts);
    return conn.request(cmds, opts.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  }

  private connection(): Promise<ControlConnection | null> {
    if (this.shut) return Promise.resolve(null);
    if (this.conn?.alive) return Promise.resolve(this.conn);
    if (this.connecting) return this.connecting;
    if (Date.now() - this.lastFailedAttach < this.opts.reattachIntervalMs) return Promise.resolve(null);
    this.connecting = this.attach().finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }

  private async attach(): Promise<ControlConnection | null> {
    const flags = this.opts.output ? 'ignore-size' : 'ignore-size,no-output';
    // -N: a control client must never start a server (attach-session otherwise would).
    const args = [...globalArgs(this.opts.target), '-N', '-C', 'attach-session', '-f', flags];
    if (this.opts.session !== null) args.push('-t', this.opts.session);
    try {
      const conn = await ControlConnection.open(this.opts.bin, args, this.opts.env, this.opts.attachTimeoutMs, {
        notification: (n) => this.emit('notification', n),
        lost: (reason) => this.lossError(reason),
        closed: (info) => {
          if (this.conn !== null && !this.conn.alive) this.conn = null;
          this.emit('closed', info);
        },
      });
      if (this.shut) {
        conn.kill('closed by caller', new TmuxError('failed', '', 'tmux runner closed'));
        return null;
      }
      this.conn = conn;
      this.emit('attached');
      return conn;
    } catch {
      // No server, no session, or tmux too old for control mode: one-shot processes report
      // the precise error on the call itself.
      this.lastFailedAttach = Date.now();
      return null;
    }
  }

  /** The client went away under pending calls: was it the server, or only our client? */
  private async lossError(reason: string): Promise<TmuxError> {
    try {
      await this.oneShot.run(['display-message', '-p', ''], { timeoutMs: 1000 });
      return new TmuxError('failed', reason, `tmux control client ended (${reason || 'detached'}) while the server lives`);
    } catch (e) {
      if (e instanceof TmuxError) return e;
      return new TmuxError('server-gone', reason);
    }
  }
}

interface Pending {
  sentinel: string;
  blocks: ControlBlock[];
  expected: number;
  settled: boolean;
  timer: NodeJS.Timeout | null;
  resolve: (v: string[]) => void;
  reject: (e: TmuxError) => void;
}

interface ConnectionHooks {
  notification: (n: ControlNotification) => void;
  /** Decides what pending calls fail with when the client ends on its own. */
  lost: (reason: string) => Promise<TmuxError>;
  closed: (info: ControlClosed) => void;
}

/** One control-mode client process and its FIFO of outstanding requests. */
class ControlConnection {
  private readonly parser = new ControlParser();
  private readonly lines = new LineSplitter();
  private readonly queue: Pending[] = [];
  // Each request line is followed by a display of a unique token: its reply marks the end of
  // the request's blocks however many the request produced (a failing command cuts its chain
  // short, so counting blocks is not enough).
  private readonly nonce = `__tma_sync_${randomBytes(8).toString('hex')}`;
  private seq = 0;
  private ready = false;
  private exitReason: string | null = null;
  private forced: TmuxError | null = null;
  private stderr = '';
  private finished = false;
  private onReady: ((err: TmuxError | null) => void) | null = null;

  private constructor(
    private readonly child: ChildProcessWithoutNullStreams,
    private readonly hooks: ConnectionHooks,
  ) {}

  static open(bin: string, args: string[], env: Env, timeoutMs: number, hooks: ConnectionHooks): Promise<ControlConnection> {
    const child = spawn(bin, args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
    const conn = new ControlConnection(child, hooks);
    return new Promise<ControlConnection>((resolve, reject) => {
      const timer = setTimeout(() => {
        conn.kill('attach timed out', new TmuxError('timeout', '', 'tmux control client did not attach in time'));
      }, timeoutMs);
      conn.onReady = (err) => {
        clearTimeout(timer);
        conn.onReady = null;
        if (err) reject(err);
        else resolve(conn);
      };
      conn.wire();
    });
  }

  get alive(): boolean {
    return this.ready && this.exitReason === null && !this.finished;
  }

  request(cmds: string[][], timeoutMs: number): Promise<string[]> {
    return new Promise<string[]>((resolve, reject) => {
      if (!this.alive) {
        reject(this.forced ?? new TmuxError('failed', '', 'tmux control client is not attached'));
        return;
      }
      const sentinel = `${this.nonce}.${++this.seq}`;
      const p: Pending = { sentinel, blocks: [], expected: cmds.length, settled: false, timer: null, resolve, reject };
      p.timer = setTimeout(() => this.timedOut(p, timeoutMs), timeoutMs);
      this.queue.push(p);
      this.child.stdin.write(`${controlLine(cmds)}\n${controlLine([['display-message', '-p', sentinel]])}\n`);
    });
  }

  /** End the client; pending calls fail with `err`. */
  kill(reason: string, err: TmuxError): void {
    if (this.finished) return;
    this.forced ??= err;
    this.exitReason ??= reason;
    this.child.kill('SIGKILL');
  }

  private wire(): void {
    const { child } = this;
    // The client must never keep a finished CLI alive; a pending call's timer does that.
    child.unref();
    for (const s of [child.stdin, child.stdout, child.stderr] as unknown as { unref?: () => void }[]) s.unref?.();
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stdin.on('error', () => {
      // EPIPE after the client died; the close handler settles everything.
    });
    child.stderr.on('data', (d: string) => (this.stderr += d));
    child.stdout.on('data', (chunk: string) => {
      for (const line of this.lines.push(chunk)) this.line(line);
    });
    child.on('error', (e) => {
      this.forced ??= new TmuxError('failed', '', `cannot run tmux: ${e.message}`);
      void this.finish('spawn failed');
    });
    child.on('close', (code, signal) => {
      void this.finish(this.exitReason ?? `client exited with ${code ?? signal}`);
    });
  }

  private line(line: string): void {
    const msg = this.parser.push(line);
    if (msg === null) return;
    if (msg.type === 'notification') {
      if (msg.name === 'exit') {
        // The process ends right after; stop handing out this connection now.
        this.exitReason ??= msg.args === '' ? 'exit' : msg.args;
        setTimeout(() => this.child.kill('SIGKILL'), 1000).unref();
      }
      this.hooks.notification(msg);
      return;
    }
    if (!this.ready) {
      // The first block answers attach-session itself.
      this.ready = !msg.error;
      this.onReady?.(msg.error ? attachError(blockText(msg)) : null);
      if (msg.error) this.kill('attach failed', attachError(blockText(msg)));
      return;
    }
    // Flag bit 0 marks commands this client sent; others (e.g. hooks) are not ours.
    if ((msg.flags & 1) === 0) return;
    const head = this.queue[0];
    if (!head) return;
    if (!msg.error && msg.lines.length === 1 && msg.lines[0] === head.sentinel) {
      this.queue.shift();
      this.complete(head);
      return;
    }
    head.blocks.push(msg);
  }

  private complete(p: Pending): void {
    if (p.settled) return;
    p.settled = true;
    if (p.timer) clearTimeout(p.timer);
    const failed = p.blocks.find((b) => b.error);
    if (failed) {
      p.reject(errorFromStderr(blockText(failed)));
    } else if (p.blocks.length !== p.expected) {
      p.reject(new TmuxError('failed', '', `expected ${p.expected} replies from tmux, got ${p.blocks.length}`));
    } else {
      p.resolve(p.blocks.map(blockText));
    }
  }

  private timedOut(p: Pending, timeoutMs: number): void {
    if (p.settled) return;
    p.settled = true;
    const err = new TmuxError('timeout', '', `tmux did not answer within ${timeoutMs} ms`);
    p.reject(err);
    // tmux answers in order: if the oldest request is stuck, so is everything behind it, and
    // only a fresh client gets unstuck. A later request timing out is merely waiting its turn.
    if (this.queue[0] === p) this.kill('request timed out', err);
  }

  private async finish(reason: string): Promise<void> {
    if (this.finished) return;
    this.finished = true;
    this.exitReason ??= reason;
    if (this.onReady) {
      const text = this.stderr.trim();
      this.onReady(this.forced ?? (text === '' ? new TmuxError('failed', '', reason) : attachError(text)));
    }
    const waiting = this.queue.splice(0).filter((p) => !p.settled);
    let err = this.forced;
    if (err === null && (waiting.length > 0 || this.ready)) err = await this.hooks.lost(reason);
    for (const p of waiting) {
      if (p.settled) continue;
      p.settled = true;
      if (p.timer) clearTimeout(p.timer);
      p.reject(err ?? new TmuxError('failed', '', reason));
    }
    if (this.ready) this.hooks.closed({ reason, kind: err?.kind ?? 'failed' });
  }
}

function attachError(text: string): TmuxError {
  const t = text.trim();
  return new TmuxError(isServerGone(t) ? 'server-gone' : 'failed', t);
}
