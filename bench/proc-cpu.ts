// CPU time of a process (and of the processes under it) from /proc, for the benches that measure
// what something costs while nothing happens: clock ticks hold up on a loaded machine.

import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second (USER_HZ) on Linux. */
export const TICK = 100;

/** utime+stime (own) and cutime+cstime (waited children) of one process, in ticks. */
export function ticks(pid: number): { own: number; kids: number } {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return { own: Number(f[11]) + Number(f[12]), kids: Number(f[13]) + Number(f[14]) };
  } catch {
    return { own: 0, kids: 0 };
  }
}

/** Direct children of a process (its tmux control clients, any `ps` it spawned and still runs). */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  try {
    for (const t of readdirSync(`/proc/${pid}/task`)) {
      const kids = readFileSync(`/proc/${pid}/task/${t}/children`, 'utf8').trim();
      if (kids) out.push(...kids.split(' ').map(Number));
    }
  } catch {
    // exited while we looked: its time is in its parent's cutime by now
  }
  return out;
}

/** Ticks used so far by a process and everything under it (live children read directly). */
export function treeTicks(pid: number): number {
  const t = ticks(pid);
  let sum = t.own + t.kids;
  for (const c of childrenOf(pid)) sum += treeTicks(c);
  return sum;
}
