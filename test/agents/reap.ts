// Ending what an agent left behind. Agents fork helpers that outlive their pane (Codex's
// app-server, OpenCode's server, hook processes started detached), so the pane's process tree is
// not enough: every process whose environment carries one of our temp HOME dirs is ours, and only
// those are ended — never a process matched by name.

import { readdirSync, readFileSync } from 'node:fs';

/** Pids of live processes whose environment has HOME=<home> exactly. */
export function processesWithHome(home: string): number[] {
  const want = `HOME=${home}`;
  const pids: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d) || Number(d) === process.pid) continue;
    let env: string;
    try {
      env = readFileSync(`/proc/${d}/environ`, 'latin1');
    } catch {
      continue;
    }
    if (env.split('\0').includes(want)) {
      // A zombie has no one to reap but its parent; it holds nothing.
      try {
        if (/\) Z /.test(readFileSync(`/proc/${d}/stat`, 'latin1'))) continue;
      } catch {
        continue;
      }
      pids.push(Number(d));
    }
  }
  return pids;
}

/** TERM, then KILL whatever is still there after a grace period; resolves once all are gone. */
export async function reap(home: string, graceMs = 1500): Promise<number[]> {
  const found = processesWithHome(home);
  const signal = (pids: number[], s: NodeJS.Signals) => {
    for (const pid of pids) {
      try {
        process.kill(pid, s);
      } catch {
        // gone already
      }
    }
  };
  signal(found, 'SIGTERM');
  const end = Date.now() + graceMs;
  while (Date.now() < end && processesWithHome(home).length) await new Promise((r) => setTimeout(r, 100));
  for (let i = 0; i < 20; i++) {
    const left = processesWithHome(home);
    if (!left.length) break;
    signal(left, 'SIGKILL');
    await new Promise((r) => setTimeout(r, 100));
  }
  return found;
}
