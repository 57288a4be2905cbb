// The servers a long-running verb (`wait`) looks at, kept current between looks. Outside tmux with
// no -L/-S that is every server of the user, as the collector follows them: each look lists the
// socket directory again, so a server started since is looked at too and one that ended drops
// out (its panes are then gone, which is what a waiter on them must hear). Otherwise it is the one
// server as before, and that server ending ends the verb ("no tmux server running").

import { discover } from '../collector/fleet/discovery.js';
import { TmuxError } from '../collector/tmux/errors.js';
import type { Parsed } from './args.js';
import { openLocal, type Local } from './local.js';
import { coversAllServers } from './servers.js';

type OpenOptions = Parameters<typeof openLocal>[1];

export interface ServerSet {
  /** The servers to look at now; none live is the usual "no tmux server running". */
  current(): Promise<Local[]>;
  /** A server answered that it is gone: dropped from a set of every server, the verb's end otherwise. */
  gone(local: Local, e: TmuxError): void;
  close(): void;
}

export async function openServerSet(p: Parsed, opts: OpenOptions = {}): Promise<ServerSet> {
  if (!coversAllServers(p)) return oneServer(await openLocal(p, opts));
  return everyServer(p, opts);
}

function oneServer(local: Local): ServerSet {
  return {
    current: () => Promise.resolve([local]),
    gone: (_l, e) => {
      throw e;
    },
    close: () => local.close(),
  };
}

function everyServer(p: Parsed, opts: OpenOptions): ServerSet {
  // By canonical socket path, as discovery names a server.
  const open = new Map<string, Local>();
  const drop = (key: string) => {
    open.get(key)?.close();
    open.delete(key);
  };
  return {
    current: async () => {
      // Servers already open are listed without a probe: a gone one says so on its next look.
      const found = await discover({ names: [], paths: [], env: process.env, known: new Set(open.keys()) });
      const keys = new Set(found.map((d) => d.key));
      for (const key of [...open.keys()]) if (!keys.has(key)) drop(key);
      for (const d of found) {
        if (open.has(d.key)) continue;
        try {
          open.set(d.key, await openLocal(p, { ...opts, target: { kind: 'path', path: d.key } }));
        } catch (e) {
          // Ended between the scan and the connection: not a server to look at.
          if (!(e instanceof TmuxError && e.kind === 'server-gone')) throw e;
        }
      }
      if (open.size === 0) throw new TmuxError('server-gone', '');
      return [...open.values()];
    },
    gone: (local) => {
      for (const [key, l] of open) if (l === local) drop(key);
    },
    close: () => {
      for (const key of [...open.keys()]) drop(key);
    },
  };
}
