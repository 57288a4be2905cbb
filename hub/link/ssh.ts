// The hub dials a collector over ssh: it logs in with a key, checks the host key against a
// known_hosts file, runs the collector command and speaks the protocol over the command's
// stdin/stdout, one frame per line. The connection is redialled with capped, jittered backoff for
// as long as the hub runs, also after a refused host key: the user may fix the file meanwhile.
//
// Nothing is sent before the host key is verified and the login succeeded: the command only runs
// once ssh2 reports the connection ready, which it does only after both.

import { readFileSync } from 'node:fs';
import type { Logger } from 'pino';
import ssh2 from 'ssh2';
import type { ClientChannel, ConnectConfig } from 'ssh2';
import type { FrameLink } from '../../shared/link.js';
import { backoffDelay, DEFAULT_BACKOFF, type BackoffPolicy } from '../../shared/backoff.js';
import { expandHome, type SshTarget } from '../config/config.js';
import {
  checkHostKey,
  fingerprint,
  hostKeyAlgorithms,
  keyTypeOfBlob,
  knownHostsName,
  knownKeyTypes,
  parseKnownHosts,
  type KnownHostEntry,
} from './known-hosts.js';
import { LineSplitter } from './line-frames.js';

const { Client } = ssh2;

export interface SshTuning {
  backoff?: BackoffPolicy;
  /** Give up on a connection whose handshake and login have not finished in this long. */
  readyTimeoutMs?: number;
  /** ssh-level keepalive; a peer that misses three in a row is dropped. */
  keepaliveMs?: number;
  random?: () => number;
}

export interface SshDialOptions extends SshTuning {
  target: SshTarget;
  logger: Logger;
  /** A verified, logged-in connection runs the command: here is its link; the session that takes
   * it says when the link proved itself (its snapshot applied), which is what resets the backoff. */
  onLink: (link: FrameLink) => { onAccepted(cb: () => void): void };
  /** The host cannot be reached or its link ended, and why (refused host key, failed login, …). */
  onDown: (reason: string) => void;
  /**
   * Asked before every attempt: a reason holds the dial back (on NATS, another hub holds the
   * host's link). Asked again every TURN_CHECK_MS until it says null; waiting is not a failure.
   */
  mayDial?: () => string | null;
}

/** How often a held-back dial asks again: a small part of the shortest lease, so a takeover waits little. */
const TURN_CHECK_MS = 250;

export interface SshDialer {
  /** Stop redialling and close the current connection; resolves once its socket is gone. */
  stop(reason?: string): Promise<void>;
}

const STDERR_LINE_MAX = 500;

/** Reads known_hosts; a missing file is an empty one (every host unknown), not a crash. */
function readKnownHosts(path: string): { entries: KnownHostEntry[]; note: string } {
  try {
    return { entries: parseKnownHosts(readFileSync(path, 'utf8')), note: '' };
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? (e as Error).message;
    return { entries: [], note: ` (cannot read ${path}: ${code})` };
  }
}

function refusalText(verdict: 'mismatch' | 'unknown' | 'revoked', name: string, key: Buffer, file: string, note: string): string {
  const shown = `${keyTypeOfBlob(key) ?? 'unknown-type'} ${fingerprint(key)}`;
  if (verdict === 'mismatch') {
    return `host key refused: ${name} presented ${shown}, which does not match its entry in ${file} (the key changed, or the connection is intercepted)`;
  }
  if (verdict === 'revoked') return `host key refused: ${name} presented ${shown}, which ${file} marks @revoked`;
  return `host key refused: ${name} is not in ${file}${note}; it presented ${shown}`;
}

/** Why a connection attempt failed, in words for the host status. */
function describeError(e: Error & { level?: string; code?: string }, t: SshTarget): string {
  if (e.level === 'client-authentication') return `ssh login refused for ${t.user}@${t.host}:${t.port} with key ${t.identity}`;
  if (e.level === 'client-socket') return `cannot connect to ${t.host}:${t.port}: ${e.code ?? e.message}`;
  if (e.level === 'client-timeout') return `ssh to ${t.host}:${t.port} timed out before login finished`;
  return `ssh to ${t.host}:${t.port} failed: ${e.message}`;
}

/** A collector logs JSON records when its stderr is not a terminal: its message is what a reason needs. */
function stderrText(line: string): string {
  if (!line.startsWith('{')) return line;
  try {
    const msg = (JSON.parse(line) as { msg?: unknown }).msg;
    return typeof msg === 'string' ? msg : line;
  } catch {
    return line;
  }
}

/** The command's stdout lines in, stdin lines out. stderr is logged, never parsed as frames. */
function channelLink(ch: ClientChannel, log: Logger, onEnd: () => void): FrameLink {
  const msg: ((t: string) => void)[] = [];
  const closed: ((r: string) => void)[] = [];
  let open = true;
  let exit: string | null = null;
  let lastStderr = '';
  const end = (reason: string) => {
    if (!open) return;
    open = false;
    closed.forEach((cb) => cb(reason));
    onEnd();
  };
  const out = new LineSplitter();
  const err = new LineSplitter();
  ch.setEncoding('utf8');
  ch.stderr.setEncoding('utf8');
  ch.on('data', (chunk: string) => {
    for (const line of out.push(chunk)) if (open) msg.forEach((cb) => cb(line));
  });
  ch.stderr.on('data', (chunk: string) => {
    for (const line of err.push(chunk)) {
      lastStderr = stderrText(line).slice(0, STDERR_LINE_MAX);
      log.info({ stderr: lastStderr }, 'collector stderr');
    }
  });
  ch.on('exit', (code: number | null, signal?: string) => {
    exit = signal ? `signal ${signal}` : `code ${code ?? '?'}`;
  });
  ch.on('close', () => end(`collector command ended (${exit ?? 'no exit status'})${lastStderr ? `: ${lastStderr}` : ''}`));
  ch.on('error', (e: Error) => end(`ssh channel error: ${e.message}`));
  return {
    send(text) {
      if (open) ch.write(`${text}\n`);
    },
    onMessage(cb) {
      msg.push(cb);
    },
    onClose(cb) {
      closed.push(cb);
    },
    close(reason = 'closed by hub') {
      if (!open) return;
      // End of input is how `tma collector --stdio` is told to stop.
      ch.end();
      end(reason);
    },
  };
}

/** Keep one `[[ssh]]` target connected until stopped. */
export function dialSsh(opts: SshDialOptions): SshDialer {
  const t = opts.target;
  const log = opts.logger.child({ host: t.name, transport: 'ssh' });
  const policy = opts.backoff ?? DEFAULT_BACKOFF;
  const random = opts.random ?? Math.random;
  const name = knownHostsName(t.host, t.port);
  const knownHostsFile = expandHome(t.known_hosts);
  let attempt = 0;
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  let client: InstanceType<typeof Client> | null = null;
  let link: FrameLink | null = null;
  let gone: Promise<void> = Promise.resolve();
  let holding = false;

  const retry = (reason: string) => {
    if (stopped) return;
    opts.onDown(reason);
    const delay = backoffDelay(attempt++, policy, random);
    log.warn({ reason, retry_ms: delay }, 'ssh link down');
    timer = setTimeout(connect, delay);
    timer.unref();
  };

  function connect(): void {
    timer = null;
    if (stopped) return;
    const hold = opts.mayDial?.() ?? null;
    if (hold !== null) {
      if (!holding) log.info({ reason: hold }, 'ssh dial held back');
      holding = true;
      timer = setTimeout(connect, TURN_CHECK_MS);
      timer.unref();
      return;
    }
    if (holding) {
      log.info('ssh dial no longer held back');
      // A turn that has just come is a fresh start, not the next of a run of failures.
      attempt = 0;
      holding = false;
    }
    let refusal: string | null = null;
    let failure: string | null = null;
    let settled = false;
    const settle = (reason: string) => {
      if (settled) return;
      settled = true;
      retry(reason);
    };

    let privateKey: Buffer;
    try {
      privateKey = readFileSync(expandHome(t.identity));
    } catch (e) {
      return settle(`cannot read identity ${t.identity}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
    // Read for every attempt, so a corrected file takes effect on the next redial.
    const { entries, note } = readKnownHosts(knownHostsFile);
    const algorithms = hostKeyAlgorithms(knownKeyTypes(entries, name));

    const c = new Client();
    client = c;
    gone = new Promise<void>((resolve) => c.once('close', () => resolve()));
    const cfg: ConnectConfig = {
      host: t.host,
      port: t.port,
      username: t.user,
      privateKey,
      // Key authentication only: never a password or keyboard-interactive prompt.
      authHandler: ['publickey'],
      tryKeyboard: false,
      readyTimeout: opts.readyTimeoutMs ?? 20_000,
      keepaliveInterval: opts.keepaliveMs ?? 15_000,
      keepaliveCountMax: 3,
      hostVerifier: (key: Buffer) => {
        const verdict = checkHostKey(entries, name, key);
        if (verdict === 'match') return true;
        refusal = refusalText(verdict, name, key, t.known_hosts, note);
        return false;
      },
    };
    if (algorithms.length > 0) cfg.algorithms = { serverHostKey: algorithms as NonNullable<ConnectConfig['algorithms']>['serverHostKey'] };

    // Without no-delay every small frame through the tunnel waits on Nagle's algorithm.
    c.on('connect', () => c.setNoDelay(true));
    c.on('error', (e: Error & { level?: string }) => {
      failure ??= describeError(e, t);
    });
    c.on('ready', () => {
      if (stopped) return void c.end();
      c.exec(t.command, (err, ch) => {
        if (err) {
          failure = `cannot run ${JSON.stringify(t.command)}: ${err.message}`;
          c.end();
          return;
        }
        if (stopped) {
          ch.end();
          c.end();
          return;
        }
        const l = channelLink(ch, log, () => c.end());
        link = l;
        log.info({ command: t.command }, 'ssh link up');
        // Logging in, even saying hello, is not enough to reset the backoff: a collector whose every
        // snapshot is refused would be redialled in a hot loop. Only an accepted snapshot counts.
        opts.onLink(l).onAccepted(() => {
          if (link === l) attempt = 0;
        });
        // Registered after the session's own handler, so the host is marked down before we say why.
        l.onClose((reason) => {
          if (link === l) link = null;
          settle(reason);
        });
      });
    });
    c.on('close', () => {
      if (client === c) client = null;
      const l = link;
      if (l) l.close(`ssh connection closed${failure ? `: ${failure}` : ''}`);
      else settle(refusal ?? failure ?? `ssh connection to ${t.host}:${t.port} closed before the collector started`);
    });
    try {
      c.connect(cfg);
    } catch (e) {
      client = null;
      settle(`ssh to ${t.host}:${t.port} not attempted: ${(e as Error).message}`);
    }
  }

  connect();
  return {
    async stop(reason = 'hub shutting down') {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = null;
      link?.close(reason);
      const c = client;
      if (!c) return;
      c.end();
      // A peer that never acknowledges the disconnect must not hold the hub's shutdown.
      const force = setTimeout(() => c.destroy(), 2000);
      await gone;
      clearTimeout(force);
    },
  };
}
