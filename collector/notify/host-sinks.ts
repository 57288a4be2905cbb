// Where a fire goes on its own host: a message to every attached client (always), a bell and an
// OSC 9 on the pane's terminal, a JSONL log line, and a command. Each sink fails on its own; none
// of them can hold up the cycle that fired.

import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, mkdirSync, openSync, writeSync, closeSync, constants } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import type { TmuxRunner } from '../tmux/runner.js';
import type { NotifySettings } from '../config/config-types.js';
import { clearFailure, recordFailure } from './failure-marker.js';
import { commandFor, displayText, hookPayload, logLine, oscText, payloadEnv, type Fire } from './payload.js';
import type { LineLog } from '../../shared/log-level.js';

/** Commands running at once; past this the oldest is killed to make room (surfaces §4). */
export const MAX_COMMANDS_IN_FLIGHT = 64;
const TMUX_TIMEOUT_MS = 3000;

export function expandHome(path: string, env: NodeJS.ProcessEnv): string {
  return path === '~' || path.startsWith('~/') ? join(env.HOME || homedir(), path.slice(1)) : path;
}

/** tmux expands formats in display-message text: a literal `#` must be doubled. */
export function displayEscape(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f]/g, ' ').replace(/#/g, '##');
}

export interface HostSinkOptions {
  settings: NotifySettings;
  env: NodeJS.ProcessEnv;
  log?: LineLog;
  /**
   * A short-lived caller (`tma event` inside an agent's hook): a command is started in its own
   * process group and let go once its stdin is written, so the hook neither waits for it nor
   * takes it down on exit. Its exit status is then not recorded.
   */
  detach?: boolean;
}

export class HostSinks {
  private readonly running: ChildProcess[] = [];
  private readonly writes: Promise<void>[] = [];
  private readonly log: LineLog;

  constructor(private readonly o: HostSinkOptions) {
    this.log = o.log ?? (() => undefined);
  }

  /** Fire through every configured sink. Resolves once the quick ones are done; a command runs on. */
  async fire(f: Fire, runner: TmuxRunner): Promise<void> {
    const s = this.o.settings;
    await this.display(f, runner).catch((e: unknown) => this.log(`notify: display-message failed: ${(e as Error).message}`, 'warn'));
    if (s.bell || s.osc) await this.toTerminal(f, runner).catch(() => undefined);
    // The log line is written before the command starts, so a log shows what was attempted.
    if (s.log) this.appendLog(f, s.log);
    const cmd = commandFor(f.trigger, s, this.o.env);
    if (cmd) this.runCommand(cmd, f);
  }

  private async display(f: Fire, runner: TmuxRunner): Promise<void> {
    const clients = (await runner.run(['list-clients', '-F', '#{client_name}'], { timeoutMs: TMUX_TIMEOUT_MS })).split('\n').filter((c) => c.trim() !== '');
    if (!clients.length) return;
    const text = displayEscape(displayText(f));
    await runner.runChain(
      clients.map((c) => ['display-message', '-c', c, text]),
      { timeoutMs: TMUX_TIMEOUT_MS },
    );
  }

  private async toTerminal(f: Fire, runner: TmuxRunner): Promise<void> {
    const tty = (await runner.run(['display-message', '-p', '-t', f.row.pane, '#{pane_tty}'], { timeoutMs: TMUX_TIMEOUT_MS })).trim();
    if (!tty.startsWith('/dev/')) return;
    let bytes = '';
    if (this.o.settings.bell) bytes += '\u0007';
    if (this.o.settings.osc) bytes += `\u001b]9;${oscText(f).replace(/[\u0000-\u001f\u007f]/g, ' ')}\u0007`;
    const fd = openSync(tty, constants.O_WRONLY | constants.O_NOCTTY | constants.O_NONBLOCK);
    try {
      writeSync(fd, bytes);
    } finally {
      closeSync(fd);
    }
  }

  private appendLog(f: Fire, path: string): void {
    try {
      const p = expandHome(path, this.o.env);
      mkdirSync(dirname(p), { recursive: true });
      appendFileSync(p, `${logLine(f, this.o.settings.includeTitle)}\n`);
    } catch {
      // The log is best effort by contract: a full disk must not stop the ring.
    }
  }

  private runCommand(cmd: string, f: Fire): void {
    const env = this.o.env;
    const includeTitle = this.o.settings.includeTitle;
    while (this.running.length >= MAX_COMMANDS_IN_FLIGHT) this.running.shift()?.kill('SIGKILL');
    let child: ChildProcess;
    const failed = (reason: string) => recordFailure(env, { at: Date.now(), reason, command: cmd });
    try {
      child = spawn('sh', ['-c', cmd], {
        env: { ...stripMirror(env), ...payloadEnv(f, includeTitle) },
        stdio: ['pipe', 'ignore', 'ignore'],
        detached: this.o.detach === true,
      });
    } catch (e) {
      failed(`spawn failed: ${(e as Error).message}`);
      return;
    }
    this.running.push(child);
    const forget = () => {
      const i = this.running.indexOf(child);
      if (i >= 0) this.running.splice(i, 1);
    };
    child.on('error', (e) => {
      forget();
      failed(`spawn failed: ${e.message}`);
    });
    child.on('exit', (code, signal) => {
      forget();
      if (code === 0) clearFailure(env);
      else failed(signal ? `killed by ${signal}` : `exit ${code}`);
    });
    child.stdin?.on('error', () => undefined);
    const body = `${JSON.stringify(hookPayload(f, includeTitle))}\n`;
    if (!this.o.detach) {
      child.stdin?.end(body);
      return;
    }
    this.writes.push(
      new Promise<void>((resolve) => {
        const letGo = () => {
          forget();
          child.unref();
          resolve();
        };
        if (!child.stdin) return letGo();
        child.stdin.on('error', letGo);
        child.stdin.end(body, letGo);
      }),
    );
  }

  /** Detached mode: wait (at most `maxMs`) until every started command has its payload. */
  async handedOff(maxMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const cap = new Promise<void>((r) => {
      timer = setTimeout(r, maxMs);
      timer.unref();
    });
    await Promise.race([Promise.all(this.writes), cap]);
    clearTimeout(timer);
  }

  /** Commands still running (tests, shutdown). */
  get inFlight(): number {
    return this.running.length;
  }
}

/** A command must not inherit a stale mirror from whoever started the collector. */
function stripMirror(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(env))
    if (!/^TMA_(AGENT|PANE|STATE|LOCATOR|TITLE|SINCE_MS|EPISODE_MS|DETAIL|SESSION|REPO|BRANCH|CONTEXT_PCT)$/.test(k)) out[k] = v;
  return out;
}
