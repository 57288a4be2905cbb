// Which tmux servers to follow. Without socket flags: every server of this user, i.e. every socket
// in the tmux socket directory that accepts a connection (tmux 3.3a leaves its socket file behind
// when it exits, so a file alone proves nothing). With flags: exactly the servers named, each
// followed only while it answers.

import { readdirSync, lstatSync } from 'node:fs';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import type { ServerTarget } from '../tmux/target.js';
import { canonicalSocketPath, socketPathOfTarget, tmuxSocketDir } from './wake.js';

type Env = Readonly<Record<string, string | undefined>>;

export interface Discovered {
  /** Canonical socket path: the identity used to avoid following one server twice. */
  key: string;
  target: ServerTarget;
}

export interface DiscoveryOptions {
  names: readonly string[];
  paths: readonly string[];
  env: Env;
  uid?: number;
  probeTimeoutMs?: number;
  /** Servers already followed: listed without a probe (their engine notices when one is gone). */
  known?: ReadonlySet<string>;
}

/** True when something accepts connections on the unix socket. */
export function socketAnswers(path: string, timeoutMs = 300): Promise<boolean> {
  return new Promise((done) => {
    const s = createConnection(path);
    const t = setTimeout(() => end(false), timeoutMs);
    function end(ok: boolean) {
      clearTimeout(t);
      s.destroy();
      done(ok);
    }
    s.once('connect', () => end(true));
    s.once('error', () => end(false));
  });
}

function socketsIn(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names
    .map((n) => join(dir, n))
    .filter((p) => {
      try {
        return lstatSync(p).isSocket();
      } catch {
        return false;
      }
    });
}

/** The candidates before probing: named targets, or every socket file of the directory. */
export function candidates(opts: DiscoveryOptions): ServerTarget[] {
  const named: ServerTarget[] = [
    ...opts.names.map((name): ServerTarget => ({ kind: 'name', name })),
    ...opts.paths.map((path): ServerTarget => ({ kind: 'path', path })),
  ];
  if (named.length) return named;
  return socketsIn(tmuxSocketDir(opts.env, opts.uid)).map((path): ServerTarget => ({ kind: 'path', path }));
}

/** One scan: the live servers, each once. */
export async function discover(opts: DiscoveryOptions): Promise<Discovered[]> {
  const seen = new Map<string, Discovered>();
  const found = await Promise.all(
    candidates(opts).map(async (target) => {
      const path = socketPathOfTarget(target, opts.env, opts.uid);
      if (opts.known?.has(canonicalSocketPath(path))) return { key: canonicalSocketPath(path), target };
      return (await socketAnswers(path, opts.probeTimeoutMs)) ? { key: canonicalSocketPath(path), target } : null;
    }),
  );
  for (const d of found) if (d && !seen.has(d.key)) seen.set(d.key, d);
  return [...seen.values()];
}
