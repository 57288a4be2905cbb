// The process table, read once per poll cycle for the identity step. Linux /proc is read
// directly (a few ms); anywhere it is missing, `ps` is asked instead (a spawn, ~15 ms).

import { readdirSync, readFileSync } from 'node:fs';
import { execFile } from 'node:child_process';
import type { ProcEntry } from '../core/proc.js';

export type { ProcEntry };

/** tpgid: BSD reports 0 and Linux -1 for "no controlling terminal". */
function tpgidOf(n: number): number | null {
  return Number.isInteger(n) && n > 0 ? n : null;
}

function intOf(s: string | undefined): number | null {
  if (s === undefined || !/^-?\d+$/.test(s)) return null;
  return Number(s);
}

/**
 * One `/proc/<pid>/stat` line. comm sits in parentheses and may itself contain spaces and `)`,
 * so it runs to the LAST `)`; the numeric fields follow: state, ppid, pgrp, session, tty, tpgid.
 */
export function parseProcStat(text: string): ProcEntry | null {
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  if (open < 0 || close < open) return null;
  const pid = intOf(text.slice(0, open).trim());
  const comm = text.slice(open + 1, close);
  const f = text
    .slice(close + 1)
    .trim()
    .split(/\s+/);
  const ppid = intOf(f[1]);
  const pgid = intOf(f[2]);
  const tpgid = intOf(f[5]);
  if (pid === null || ppid === null || pgid === null || comm === '') return null;
  return { pid, ppid, pgid, tpgid: tpgid === null ? null : tpgidOf(tpgid), comm };
}

/**
 * `ps -eo pid,ppid,pgid,tpgid,comm` output. Rows whose first three columns are not numbers (the
 * header) are skipped; comm keeps its inner spaces, collapsed to one.
 */
export function parsePsTable(text: string): ProcEntry[] {
  const out: ProcEntry[] = [];
  for (const line of text.split('\n')) {
    const t = line.trim().split(/\s+/);
    const pid = intOf(t[0]);
    const ppid = intOf(t[1]);
    const pgid = intOf(t[2]);
    if (pid === null || ppid === null || pgid === null) continue;
    const tp = intOf(t[3]);
    const comm = t.slice(4).join(' ');
    if (comm === '') continue;
    out.push({ pid, ppid, pgid, tpgid: tp === null ? null : tpgidOf(tp), comm });
  }
  return out;
}

/** Every process under `procRoot`, or null when that is not a readable procfs. */
export function readProcDir(procRoot = '/proc'): ProcEntry[] | null {
  let names: string[];
  try {
    names = readdirSync(procRoot);
  } catch {
    return null;
  }
  const out: ProcEntry[] = [];
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    let text: string;
    try {
      text = readFileSync(`${procRoot}/${name}/stat`, 'utf8');
    } catch {
      continue; // exited between readdir and read
    }
    const e = parseProcStat(text);
    if (e) out.push(e);
  }
  // A directory without a single process in it is not procfs (we ourselves would be listed).
  return out.length > 0 ? out : null;
}

export function readPsTable(timeoutMs = 3000): Promise<ProcEntry[]> {
  return new Promise((resolve, reject) => {
    execFile(
      'ps',
      ['-eo', 'pid,ppid,pgid,tpgid,comm'],
      { timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024, env: { ...process.env, LC_ALL: 'C' } },
      (err: Error | null, stdout) => (err ? reject(err) : resolve(parsePsTable(stdout))),
    );
  });
}

export async function readProcessTable(opts: { procRoot?: string } = {}): Promise<ProcEntry[]> {
  return readProcDir(opts.procRoot) ?? readPsTable();
}

/** Whether a process exists (signal 0; EPERM means it exists but is not ours). */
export function pidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Only the processes under the given roots (the panes' shells), found through each task's
 * `children` list: on a busy host that is a few dozen reads instead of every process. Returns
 * null where the kernel does not offer `children` lists, so the caller reads the whole table.
 */
export function readProcTree(roots: readonly number[], procRoot = '/proc'): ProcEntry[] | null {
  const out: ProcEntry[] = [];
  const seen = new Set<number>();
  const queue = [...roots];
  let listsSeen = false;
  while (queue.length) {
    const pid = queue.pop()!;
    if (seen.has(pid)) continue;
    seen.add(pid);
    let entry: ProcEntry | null;
    try {
      entry = parseProcStat(readFileSync(`${procRoot}/${pid}/stat`, 'utf8'));
    } catch {
      continue; // gone since we learned of it
    }
    if (!entry) continue;
    out.push(entry);
    let tasks: string[];
    try {
      tasks = readdirSync(`${procRoot}/${pid}/task`);
    } catch {
      continue;
    }
    // A child started by any thread is listed under that thread, not the main one.
    for (const tid of tasks) {
      let kids: string;
      try {
        kids = readFileSync(`${procRoot}/${pid}/task/${tid}/children`, 'utf8');
      } catch {
        continue;
      }
      listsSeen = true;
      for (const k of kids.split(' ')) if (k.trim()) queue.push(Number(k));
    }
  }
  return out.length > 0 && !listsSeen ? null : out;
}

/** The processes under `roots`: the tree read where possible, else the whole table. */
export async function readProcesses(roots: readonly number[]): Promise<ProcEntry[]> {
  return readProcTree(roots) ?? readProcessTable();
}
