// Best-effort repo labels for rows: one bounded git call per distinct cwd, memoised for the life of
// the process. Any failure leaves all three fields null; they are hints, never facts.

import { execFile } from 'node:child_process';
import { basename, dirname, isAbsolute, resolve } from 'node:path';

export interface RepoInfo {
  repo: string | null;
  branch: string | null;
  worktree: boolean | null;
}

const NONE: RepoInfo = { repo: null, branch: null, worktree: null };
const memo = new Map<string, Promise<RepoInfo>>();

function gitInfo(cwd: string): Promise<RepoInfo> {
  return new Promise((done) => {
    execFile(
      'git',
      ['-C', cwd, 'rev-parse', '--show-toplevel', '--abbrev-ref', 'HEAD', '--git-common-dir'],
      { timeout: 1000, encoding: 'utf8' },
      (err, stdout) => {
        if (err) return done(NONE);
        const [top, branch, common] = stdout.split('\n');
        if (!top || !branch || !common) return done(NONE);
        const commonAbs = isAbsolute(common) ? common : resolve(cwd, common);
        // Every worktree of one repository shares the common dir, so they share the label.
        const mainDir = basename(commonAbs) === '.git' ? dirname(commonAbs) : commonAbs.replace(/\.git$/, '');
        done({ repo: basename(mainDir), branch, worktree: resolve(top) !== resolve(mainDir) });
      },
    );
  });
}

export function repoOf(cwd: string): Promise<RepoInfo> {
  if (!cwd) return Promise.resolve(NONE);
  let p = memo.get(cwd);
  if (!p) memo.set(cwd, (p = gitInfo(cwd)));
  return p;
}
