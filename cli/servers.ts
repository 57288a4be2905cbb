// Every tmux server of the user, for one-shot verbs run outside tmux with no -L/-S: they cover
// them all, as the collector does (collector/fleet/discovery.ts). Inside tmux, or with a server
// named, a verb works on that one server as before; when it finds nothing there, the hint names
// the servers where agents do run.

import { discover } from '../collector/fleet/discovery.js';
import { canonicalSocketPath, socketPathOfTarget } from '../collector/fleet/wake.js';
import { TmuxError } from '../collector/tmux/errors.js';
import type { ServerTarget } from '../collector/tmux/target.js';
import type { AgentRow } from '../shared/row.js';
import { serverLabel } from '../shared/ls-table.js';
import type { Parsed } from './args.js';
import { ExitError, openLocal, type Local } from './local.js';

/** No server named (flags, TMA_SOCKET_PATH) and not inside tmux: the verb covers every server. */
export function coversAllServers(p: Parsed, env: NodeJS.ProcessEnv = process.env): boolean {
  const named = (p.globals['socket-name']?.length ?? 0) + (p.globals['socket-path']?.length ?? 0) > 0;
  return !named && !env.TMA_SOCKET_PATH && !env.TMUX;
}

/** The live servers of this user, by socket path. */
export async function liveServers(env: NodeJS.ProcessEnv = process.env): Promise<ServerTarget[]> {
  return (await discover({ names: [], paths: [], env })).map((d) => ({ kind: 'path', path: d.key }));
}

/**
 * The servers a verb works on: every live one when it covers them all (tmux's default when none
 * answers, so the usual "no tmux server running" follows), else the one named.
 */
export async function openLocals(p: Parsed, opts: Parameters<typeof openLocal>[1] = {}): Promise<Local[]> {
  if (!coversAllServers(p)) return [await openLocal(p, opts)];
  const targets = await liveServers();
  const usual = canonicalSocketPath(socketPathOfTarget({ kind: 'default' }, process.env));
  // Only tmux's default server, or none: exactly as before (a quick status's listing is its).
  if (targets.length === 0 || (targets.length === 1 && (targets[0] as { path: string }).path === usual)) return [await openLocal(p, opts)];
  const out: Local[] = [];
  for (const target of targets) {
    try {
      // A listing handed over from a quick status belongs to one server only.
      out.push(await openLocal(p, { ...opts, target, firstListing: undefined }));
    } catch (e) {
      for (const l of out) l.close();
      throw e;
    }
  }
  return out;
}

/** Each server's cycle, in turn; a server that quit since the scan gives nothing, not an error. */
export async function eachCycle<T>(locals: readonly Local[], run: (l: Local) => Promise<T[]>): Promise<T[]> {
  const all: T[] = [];
  for (const l of locals) {
    try {
      all.push(...(await run(l)));
    } catch (e) {
      if (locals.length > 1 && e instanceof TmuxError && e.kind === 'server-gone') continue;
      throw e;
    }
  }
  return all;
}

/** The socket path of the server a Local works on, as discovery names it. */
export function socketOf(local: Pick<Local, 'target'>, env: NodeJS.ProcessEnv = process.env): string {
  return canonicalSocketPath(socketPathOfTarget(local.target, env));
}

/** How a person names a server on the command line: `-L NAME` in tmux's usual place, else `-S PATH`. */
export function serverFlag(server: string): string {
  const label = serverLabel(server);
  return label === server ? `-S ${server}` : `-L ${label}`;
}

/**
 * `; agents run on -L work (2), -L scratch (1)`: the live servers other than `except` that hold
 * agent panes, or '' when there are none. One detection cycle per server: only on a miss.
 */
export async function agentServersHint(p: Parsed, except: string | null): Promise<string> {
  const found: string[] = [];
  for (const target of await liveServers()) {
    if (target.kind === 'path' && target.path === except) continue;
    let local: Local | null = null;
    try {
      local = await openLocal(p, { target, quietManifests: true });
      const rows: AgentRow[] = (await local.engine.cycle()).rows;
      if (rows.length) found.push(`${serverFlag(rows[0]!.server)} (${rows.length})`);
    } catch {
      // Gone since the scan, or not ours to read: not a place agents run.
    } finally {
      local?.close();
    }
  }
  return found.length ? `; agents run on ${found.join(', ')}` : '';
}

/**
 * The one server a verb aimed at `--pane ID` works on. Pane ids repeat across servers (each
 * starts at %0), so over every server the pane is the agent pane with that id: exactly one
 * server must hold it, else the verb is told which to name. A named server is used as is.
 */
export async function openForPane(p: Parsed, pane: string | null, opts: Parameters<typeof openLocal>[1] = {}): Promise<Local> {
  const locals = pane === null ? [await openLocal(p, opts)] : await openLocals(p, opts);
  if (locals.length === 1) return locals[0]!;
  const holders: Local[] = [];
  for (const l of locals) {
    const rows = await eachCycle([l], async (x) => (await x.engine.cycle()).rows).catch(() => [] as AgentRow[]);
    if (rows.some((r) => r.pane === pane)) holders.push(l);
  }
  for (const l of locals) if (holders.length !== 1 || l !== holders[0]) l.close();
  if (holders.length === 1) return holders[0]!;
  const names = await Promise.all(locals.map(async (l) => serverFlag(socketOf(l))));
  if (holders.length === 0) throw new ExitError(`no agent in pane ${pane} on any tmux server (${names.join(', ')})`, 3);
  throw new ExitError(
    `pane ${pane} is an agent pane on ${holders.length} tmux servers (${holders.map((l) => serverFlag(socketOf(l))).join(', ')}): name one with -L or -S`,
    1,
  );
}
