// Hook-to-collector wake-up. `tma event` stamps a pane and then pokes a unix socket the collector
// listens on, so the change is published at once instead of on the next poll. The socket is
// named after the tmux server it belongs to, which both sides can compute without talking.
// The same socket takes whole hook events (`bin/tma-hook-send.py`): the collector stamps them
// with its already-attached tmux client, which spares the hook a Node start-up. The quick
// `tma status` asks it for its one tmux read (quick-read.ts), which the collector runs on that
// same client, so the status starts no tmux process.
//
// Measured on the project machine: poke → collector cycle start ≈ 1 ms; a full `tma event` to
// the frame at the hub is dominated by the event process's own start-up.

import { existsSync, mkdirSync, chmodSync, realpathSync, unlinkSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { basename, dirname, join, resolve } from 'node:path';
import { fnv1a64 } from '../core/fnv.js';
import type { ServerTarget } from '../tmux/target.js';

type Env = Readonly<Record<string, string | undefined>>;

const uidOf = (): number => process.getuid?.() ?? 0;

/**
 * The socket path as tmux reports it in #{socket_path}: tmux resolves the directory of a `-L`
 * socket through realpath, so both sides resolve the directory the same way before hashing.
 */
export function canonicalSocketPath(path: string): string {
  const abs = resolve(path);
  try {
    return join(realpathSync(dirname(abs)), basename(abs));
  } catch {
    return abs;
  }
}

/** `${TMUX_TMPDIR:-/tmp}/tmux-<uid>`: where tmux puts its sockets when none is named by path. */
export function tmuxSocketDir(env: Env, uid = uidOf()): string {
  return join(env.TMUX_TMPDIR || '/tmp', `tmux-${uid}`);
}

/** Where the socket of a target lives; for the default server, $TMUX names it when we are inside tmux. */
export function socketPathOfTarget(target: ServerTarget, env: Env, uid = uidOf()): string {
  switch (target.kind) {
    case 'path':
      return target.path;
    case 'name':
      return join(tmuxSocketDir(env, uid), target.name);
    case 'default': {
      const inside = env.TMUX?.split(',')[0];
      return inside || join(tmuxSocketDir(env, uid), 'default');
    }
  }
}

/** Directory of wake sockets: private to the user, since a poke makes the collector do work. */
export function wakeDir(env: Env, uid = uidOf()): string {
  return join(env.XDG_RUNTIME_DIR || '/tmp', `tma-${uid}`);
}

/** Pure: the wake socket of one tmux server, from its canonical socket path. */
export function wakeSocketPath(canonicalServerSocket: string, dir: string): string {
  return join(dir, `wake-${fnv1a64(canonicalServerSocket).toString(16).padStart(16, '0')}.sock`);
}

export interface WakeListener {
  readonly path: string;
  close(): void;
}

function probe(path: string, timeoutMs: number): Promise<boolean> {
  return new Promise((done) => {
    const s = createConnection(path);
    const t = setTimeout(() => finish(false), timeoutMs);
    function finish(ok: boolean) {
      clearTimeout(t);
      s.destroy();
      done(ok);
    }
    s.once('connect', () => finish(true));
    s.once('error', () => finish(false));
  });
}

/** One hook event handed to the collector instead of being stamped by a `tma event` process. */
export interface HookDelivery {
  agent: string;
  kind: string;
  pane: string;
  /** The hook's payload text as the agent gave it (not parsed here). */
  payload: string;
}

/** Stamps a delivered event; true only when it was handled, so the hook may skip its own stamp. */
export type OnHookEvent = (ev: HookDelivery) => Promise<boolean>;

export const EVENT_MAGIC = 'TMA1 ';
/** A request for the collector's transition history: this line alone, then a newline. */
export const HISTORY_LINE = 'TMAH';
/** The quick status's request for the outputs of its tmux read (quick-read.ts): this line alone, then a newline. */
export const QUICK_READ_LINE = 'TMAQ';
export const ACK = 0x06;
export const NAK = 0x15;
/** Opens a history answer: this byte, the document's length (u32 little-endian), the document. */
export const HISTORY = 0x13;
/** A history document larger than this is not sent (nor read). */
export const MAX_HISTORY = 1024 * 1024;
/** A hook payload larger than this is refused, and the hook stamps by itself. */
export const MAX_EVENT_LINE = 1024 * 1024;
/** The hook waits 500 ms for its byte; answering NAK before then leaves it time to stamp itself. */
export const EVENT_DEADLINE_MS = 400;
/** A PermissionRequest hook that waits for an answer (hook-wait.ts): this, then its JSON, then a newline. */
export const PERMISSION_MAGIC = 'TMAP ';
/** An answer (or the key lane's withdrawal) for a pane's waiting hook: this, its JSON, a newline. */
export const ANSWER_MAGIC = 'TMAA ';

/** A waiting hook, as a `TMAP` line names it. */
export interface PermissionWait {
  agent: string;
  pane: string;
  payload: string;
  /** How long the hook waits; the collector withdraws the request then. */
  waitMs: number;
}

/** An answer request, as a `TMAA` line names it; behavior null is the key lane withdrawing. */
export interface HookAnswerRequest {
  pane: string;
  behavior: 'allow' | 'deny' | null;
  requestId: string | null;
}

/**
 * A waiting hook: `held` tells it the collector holds its request (ACK), `answer` sends the one
 * byte that ends it (ALLOW, DENY or NAK), `onGone` hears that the hook went away before that.
 */
export type OnPermissionWait = (w: PermissionWait, held: () => void, answer: (byte: number) => void, onGone: (fn: () => void) => void) => void;
/** Settles a pane's waiting hook; the byte is one of the ANSWER_* codes. */
export type OnHookAnswer = (a: HookAnswerRequest) => number;

export const ALLOW = 0x79; // 'y'
export const DENY = 0x78; // 'x'
export const ANSWERED = 0x61; // 'a': answered through the hook now
export const ANSWERED_BEFORE = 0x62; // 'b': that request was answered through the hook already
export const CHANGED = 0x63; // 'c': another request is pending
export const NOTHING = 0x6e; // 'n': nothing pending through the hook
/** A hook waits at most this long, whatever it asks. */
export const MAX_PERMISSION_WAIT_MS = 10 * 60_000;

export function parsePermissionWait(json: string): PermissionWait | null {
  const o = jsonObject(json);
  if (!o) return null;
  const { agent, pane, payload, wait_ms } = o;
  if (typeof agent !== 'string' || typeof pane !== 'string' || typeof payload !== 'string' || typeof wait_ms !== 'number') return null;
  if (!agent || !PANE_ID.test(pane) || !Number.isSafeInteger(wait_ms) || wait_ms < 1 || wait_ms > MAX_PERMISSION_WAIT_MS) return null;
  return { agent, pane, payload, waitMs: wait_ms };
}

const HOOK_REQUEST_ID = /^[A-Za-z0-9_.:-]{1,256}$/;

export function parseHookAnswer(json: string): HookAnswerRequest | null {
  const o = jsonObject(json);
  if (!o) return null;
  const { pane, behavior } = o;
  const requestId = o.request_id ?? null;
  if (typeof pane !== 'string' || !PANE_ID.test(pane)) return null;
  if (behavior !== 'allow' && behavior !== 'deny' && behavior !== null) return null;
  if (requestId !== null && (typeof requestId !== 'string' || !HOOK_REQUEST_ID.test(requestId))) return null;
  return { pane, behavior, requestId };
}

/** A connection that neither closes nor completes a line by then is let go. */
const LINGER_MS = 1000;

const PANE_ID = /^%\d+$/;

/** A line of JSON that is an object (not an array, null or a scalar), or null. */
export function jsonObject(text: string): Record<string, unknown> | null {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return null;
  }
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
}

/** The JSON of a `TMA1` line, or null when it is not a complete, well-typed event. */
export function parseHookDelivery(json: string): HookDelivery | null {
  const o = jsonObject(json);
  if (!o) return null;
  const { agent, kind, pane } = o;
  const payload = o.payload ?? '';
  if (typeof agent !== 'string' || typeof kind !== 'string' || typeof pane !== 'string' || typeof payload !== 'string') return null;
  if (!agent || !kind || !PANE_ID.test(pane)) return null;
  return { agent, kind, pane, payload };
}

function withDeadline(work: Promise<boolean>, ms: number): Promise<boolean> {
  return new Promise((done) => {
    const t = setTimeout(() => done(false), ms);
    work.then(
      (ok) => {
        clearTimeout(t);
        done(ok === true);
      },
      () => {
        clearTimeout(t);
        done(false);
      },
    );
  });
}

/**
 * One connection: closed without a byte it is a poke, as it always was; a `TMA1` line is an event
 * answered with exactly one byte. Anything else is refused rather than guessed at.
 */
function serve(
  sock: Socket,
  onWake: () => void,
  onEvent: OnHookEvent | undefined,
  deadlineMs: number,
  history?: () => string,
  quickRead?: () => Promise<string | null>,
  hooks: { onPermission?: OnPermissionWait; onAnswer?: OnHookAnswer } = {},
): void {
  const parts: Buffer[] = [];
  let size = 0;
  let done = false;
  const settle = () => {
    done = true;
    clearTimeout(linger);
  };
  const reply = (byte: number) => {
    settle();
    sock.end(Buffer.from([byte]));
  };
  const linger = setTimeout(() => {
    if (done) return;
    if (size === 0) {
      settle();
      sock.destroy();
      onWake();
    } else reply(NAK);
  }, LINGER_MS);
  sock.on('error', () => undefined);
  sock.on('close', () => {
    if (done) return;
    settle();
    onWake();
  });
  sock.on('data', (chunk: Buffer) => {
    if (done) return;
    const nl = chunk.indexOf(0x0a);
    const take = nl < 0 ? chunk : chunk.subarray(0, nl);
    parts.push(take);
    size += take.length;
    // Refuse early: a stranger's bytes or an oversized line are not buffered to the end.
    const head = Buffer.concat(parts, Math.min(size, EVENT_MAGIC.length)).toString('latin1');
    const known =
      EVENT_MAGIC.startsWith(head) ||
      PERMISSION_MAGIC.startsWith(head) ||
      ANSWER_MAGIC.startsWith(head) ||
      `${HISTORY_LINE}\n`.startsWith(head) ||
      `${QUICK_READ_LINE}\n`.startsWith(head);
    if (!known || size > MAX_EVENT_LINE) return reply(NAK);
    if (nl < 0) return;
    settle();
    const line = Buffer.concat(parts, size).toString('utf8');
    if (line === HISTORY_LINE) {
      const doc = history ? Buffer.from(history(), 'utf8') : null;
      if (!doc || doc.length > MAX_HISTORY) return reply(NAK);
      const head = Buffer.alloc(5);
      head[0] = HISTORY;
      head.writeUInt32LE(doc.length, 1);
      sock.end(Buffer.concat([head, doc]));
      return;
    }
    if (line === QUICK_READ_LINE) {
      // One read per connection; the reader bounds how many run at once and how long each may take.
      if (!quickRead) return reply(NAK);
      void quickRead().then((answer) => {
        if (!sock.destroyed) sock.end(answer ?? Buffer.from([NAK]));
      });
      return;
    }
    if (line.startsWith(PERMISSION_MAGIC)) return servePermission(sock, line.slice(PERMISSION_MAGIC.length), hooks.onPermission, reply);
    if (line.startsWith(ANSWER_MAGIC)) {
      const a = parseHookAnswer(line.slice(ANSWER_MAGIC.length));
      return reply(a && hooks.onAnswer ? hooks.onAnswer(a) : NAK);
    }
    const ev = line.startsWith(EVENT_MAGIC) ? parseHookDelivery(line.slice(EVENT_MAGIC.length)) : null;
    if (!ev || !onEvent) return reply(NAK);
    void withDeadline(
      Promise.resolve().then(() => onEvent(ev)),
      deadlineMs,
    ).then((ok) => {
      if (!sock.destroyed) sock.end(Buffer.from([ok ? ACK : NAK]));
    });
  });
}

/** A waiting hook's connection stays open until its one byte, or until the hook goes away. */
function servePermission(sock: Socket, json: string, onPermission: OnPermissionWait | undefined, reply: (b: number) => void): void {
  const w = parsePermissionWait(json);
  if (!w || !onPermission) return reply(NAK);
  let answered = false;
  const gone: (() => void)[] = [];
  sock.on('close', () => {
    if (!answered) for (const fn of gone) fn();
  });
  onPermission(
    w,
    () => {
      if (!answered && !sock.destroyed) sock.write(Buffer.from([ACK]));
    },
    (byte) => {
      if (answered || sock.destroyed) return;
      answered = true;
      sock.end(Buffer.from([byte]));
    },
    (fn) => gone.push(fn),
  );
}

export interface ListenWakeOptions {
  /** Events sent over the socket; without it every event is refused (NAK). */
  onEvent?: OnHookEvent;
  /** How long an event may take before it is refused; default EVENT_DEADLINE_MS. */
  deadlineMs?: number;
  /** The transition history document (JSON) a `TMAH` request gets; without it, NAK. */
  history?: () => string;
  /** The quick status's read (quick-read.ts: `quickReader`) a `TMAQ` request gets; without it, NAK. */
  quickRead?: () => Promise<string | null>;
  /** A PermissionRequest hook waiting for an answer (`TMAP`); without it, NAK (the hook falls back). */
  onPermission?: OnPermissionWait;
  /** An answer for a waiting hook (`TMAA`); without it, NAK. */
  onAnswer?: OnHookAnswer;
}

/**
 * Listen on `path` for pokes and hook events. A socket file nobody answers on is a leftover of a
 * collector that died and is replaced; one a live collector holds is left alone (null).
 */
export async function listenWake(path: string, onWake: () => void, opts: ListenWakeOptions = {}): Promise<WakeListener | null> {
  const dir = dirname(path);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  if (existsSync(path)) {
    if (await probe(path, 200)) return null;
    try {
      unlinkSync(path);
    } catch {
      // Raced with another collector; listen() below reports it.
    }
  }
  const server: Server = createServer((sock) => serve(sock, onWake, opts.onEvent, opts.deadlineMs ?? EVENT_DEADLINE_MS, opts.history, opts.quickRead, opts));
  const ok = await new Promise<boolean>((done) => {
    server.once('error', () => done(false));
    server.listen(path, () => done(true));
  });
  if (!ok) return null;
  server.unref();
  return {
    path,
    close() {
      server.close();
      try {
        unlinkSync(path);
      } catch {
        // Already gone.
      }
    },
  };
}

/**
 * Poke the collector of a server. Never throws and never waits long: a missing socket fails at
 * once, and the whole call is capped so a hook is never held up by us.
 */
export function pokeWake(path: string, capMs = 30): Promise<void> {
  return new Promise((done) => {
    let s: Socket;
    try {
      s = createConnection(path);
    } catch {
      return done();
    }
    const t = setTimeout(finish, capMs);
    function finish() {
      clearTimeout(t);
      s.destroy();
      done();
    }
    s.once('connect', finish);
    s.once('error', finish);
  });
}

export type HistoryAnswer = { kind: 'document'; text: string } | { kind: 'refused' } | { kind: 'none' };

/**
 * Ask the collector of a server for its transition history. `none`: nobody listens there (no
 * collector runs for the server) or no answer came in time; `refused`: a collector answered but
 * keeps no history (an older build).
 */
export function askHistory(path: string, timeoutMs = 2000): Promise<HistoryAnswer> {
  return new Promise((done) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let s: Socket;
    try {
      s = createConnection(path);
    } catch {
      return done({ kind: 'none' });
    }
    const t = setTimeout(() => finish({ kind: 'none' }), timeoutMs);
    function finish(a: HistoryAnswer) {
      clearTimeout(t);
      s.destroy();
      done(a);
    }
    s.once('connect', () => s.write(`${HISTORY_LINE}\n`));
    s.once('error', () => finish({ kind: 'none' }));
    s.on('data', (c: Buffer) => {
      chunks.push(c);
      size += c.length;
      const all = Buffer.concat(chunks, size);
      if (all[0] !== HISTORY) return finish({ kind: 'refused' });
      if (all.length < 5) return;
      const len = all.readUInt32LE(1);
      if (len > MAX_HISTORY) return finish({ kind: 'refused' });
      if (all.length >= 5 + len) finish({ kind: 'document', text: all.subarray(5, 5 + len).toString('utf8') });
    });
    s.once('end', () => finish({ kind: chunks.length ? 'refused' : 'none' }));
  });
}
