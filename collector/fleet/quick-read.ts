// The quick status's read, asked of the running collector instead of a tmux client of its own.
// A status bar runs `tma status` every few seconds; from Node, spawning even one tmux client costs
// it more than connecting to a unix socket and reading a line. The collector already holds a
// control-mode client on the server, so it runs the very chain the quick status would have run
// (SETTLED_READ) and hands back its outputs; the status process judges them itself, with its own
// clock, exactly as it judges its own read. Nothing here decides anything about the rows.
//
// On the server's wake socket (wake.ts): the request is the line `TMAQ`; the answer is one line of
// JSON, `{"schema":1,"outs":[…]}`, or the single NAK byte when the collector cannot read tmux now
// or already has enough reads in flight. Anything else the client gets is treated as no answer.

import { lstatSync } from 'node:fs';
import { createConnection, type Socket } from 'node:net';
import { dirname } from 'node:path';
import { SETTLED_READ } from '../engine/settled-read.js';
import type { TmuxRunner } from '../tmux/runner.js';
import { jsonObject, NAK, QUICK_READ_LINE } from './wake.js';
export const QUICK_READ_SCHEMA = 1;
/** An answer longer than this is not read (a server with thousands of panes lists ~1 KB each). */
export const MAX_QUICK_ANSWER = 32 << 20;
/**
 * How long a status waits for the collector before reading tmux itself. A collector answers in a
 * few milliseconds (one control-mode chain, queued at worst behind a cycle's own chain); 250 ms
 * is far beyond that on a loaded machine, yet short enough that a hung collector costs a status
 * bar one barely visible delay before the usual tmux read answers.
 */
export const QUICK_READ_DEADLINE_MS = 250;
/** Reads a listener runs at once; further requests are refused (NAK) and their clients read tmux. */
export const MAX_QUICK_READS_IN_FLIGHT = 4;

export interface QuickReadDocument {
  schema: number;
  outs: string[];
}

/** The answer line for the outputs of SETTLED_READ. JSON escapes every newline inside, so it is one line. */
export function encodeQuickRead(outs: readonly string[]): string {
  const doc: QuickReadDocument = { schema: QUICK_READ_SCHEMA, outs: [...outs] };
  return `${JSON.stringify(doc)}\n`;
}

/** The outputs in an answer line (without its newline), or null unless it is exactly a well-formed answer. */
export function decodeQuickRead(line: string): string[] | null {
  const o = jsonObject(line);
  if (!o) return null;
  const keys = Object.keys(o);
  if (keys.length !== 2 || keys[0] !== 'schema' || keys[1] !== 'outs') return null;
  if (o.schema !== QUICK_READ_SCHEMA || !Array.isArray(o.outs) || o.outs.length !== SETTLED_READ.length) return null;
  if (!o.outs.every((s) => typeof s === 'string')) return null;
  return o.outs;
}

/**
 * The collector's side: runs SETTLED_READ on the server through `runner` (the engine's own
 * control-mode client, so no process starts) and resolves with the answer line, or null (NAK)
 * when tmux failed or MAX_QUICK_READS_IN_FLIGHT reads are already running. The runner's own
 * timeout bounds each read.
 */
export function quickReader(runner: Pick<TmuxRunner, 'runChain'>): () => Promise<string | null> {
  let inFlight = 0;
  return async () => {
    if (inFlight >= MAX_QUICK_READS_IN_FLIGHT) return null;
    inFlight++;
    try {
      return encodeQuickRead(await runner.runChain(SETTLED_READ.map((c) => [...c])));
    } catch {
      return null;
    } finally {
      inFlight--;
    }
  };
}

/** Why a client got no outputs: nobody listens, the collector refused, the bytes were not an answer, or time ran out. */
export type QuickReadMiss = 'absent' | 'refused' | 'malformed' | 'timeout';
export type QuickReadAnswer = { ok: true; outs: string[] } | { ok: false; why: QuickReadMiss };

/**
 * The socket's folder is a directory of this user's that nobody else may enter, as listenWake
 * makes it: a folder someone else made first (in a shared /tmp) could hold a socket that lies.
 */
export function privateFolder(path: string): boolean {
  const st = lstatSync(dirname(path), { throwIfNoEntry: false });
  return st !== undefined && st.isDirectory() && st.uid === (process.getuid?.() ?? st.uid) && (st.mode & 0o077) === 0;
}

/**
 * Ask the collector listening on `path` for the quick read. Never throws and never takes longer
 * than `deadlineMs`; every miss means "read tmux yourself". A socket in a folder that is not
 * private (privateFolder) counts as absent.
 */
export function askQuickRead(path: string, deadlineMs = QUICK_READ_DEADLINE_MS): Promise<QuickReadAnswer> {
  return new Promise((done) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let s: Socket;
    try {
      if (!privateFolder(path)) return done({ ok: false, why: 'absent' });
      s = createConnection(path);
    } catch {
      return done({ ok: false, why: 'absent' });
    }
    const t = setTimeout(() => finish({ ok: false, why: 'timeout' }), deadlineMs);
    function finish(a: QuickReadAnswer): void {
      clearTimeout(t);
      s.destroy();
      done(a);
    }
    const miss = (why: QuickReadMiss) => () => finish({ ok: false, why });
    s.once('connect', () => s.write(`${QUICK_READ_LINE}\n`));
    s.once('error', miss('absent'));
    s.on('data', (c: Buffer) => {
      if (size === 0 && c[0] === NAK) return finish({ ok: false, why: 'refused' });
      if (size === 0 && c[0] !== 0x7b) return finish({ ok: false, why: 'malformed' });
      const nl = c.indexOf(0x0a);
      chunks.push(nl < 0 ? c : c.subarray(0, nl));
      size += nl < 0 ? c.length : nl;
      if (size > MAX_QUICK_ANSWER) return finish({ ok: false, why: 'malformed' });
      if (nl < 0) return;
      const outs = decodeQuickRead(Buffer.concat(chunks, size).toString('utf8'));
      finish(outs ? { ok: true, outs } : { ok: false, why: 'malformed' });
    });
    s.once('end', miss('malformed'));
  });
}
