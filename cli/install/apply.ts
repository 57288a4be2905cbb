// The one way install verbs change a file: say nothing changes when nothing does; otherwise
// show a unified diff and ask (unless --yes). A declined change writes nothing. With `backup`,
// a file that existed is first kept beside itself as `<file>.tma-bak`, and the output names it.

import { existsSync, rmSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { backupConfig, ConfigFileError, readConfigFile, symlinkTarget, writeConfigAtomic } from '../../collector/install/config-file.js';
import { unifiedDiff, type DiffColors } from '../../collector/install/diff.js';

export class InstallError extends Error {}

/** Absent → the fallback text; anything not a readable config (see config-file) stops the edit. */
export function readOr(path: string, fallback: string): { text: string; exists: boolean } {
  try {
    const r = readConfigFile(path);
    return r.exists ? r : { text: fallback, exists: false };
  } catch (e) {
    if (e instanceof ConfigFileError) throw new InstallError(e.message);
    throw e;
  }
}

let lines: AsyncIterator<string> | null = null;

/** One answer from stdin; end of input counts as no. */
export async function ask(question: string): Promise<boolean> {
  process.stdout.write(question);
  lines ??= createInterface({ input: process.stdin, terminal: false })[Symbol.asyncIterator]();
  const r = await lines.next();
  if (r.done) {
    process.stdout.write('\n');
    return false;
  }
  return /^\s*(y|yes)\s*$/i.test(r.value);
}

function colors(): DiffColors | undefined {
  if (!process.stdout.isTTY || process.env.NO_COLOR) return undefined;
  const c = (code: string) => (s: string) => `\x1b[${code}m${s}\x1b[0m`;
  return { header: c('36'), del: c('31'), ins: c('32') };
}

export interface ApplyOpts {
  yes: boolean;
  /** Keep the file as it was at `<file>.tma-bak` before changing or removing it. */
  backup?: boolean;
}

export type Applied = 'unchanged' | 'written' | 'declined';

/** `after === null` removes the file. */
export async function applyFile(path: string, label: string, before: string, after: string | null, o: ApplyOpts): Promise<Applied> {
  if (after === before) {
    process.stdout.write(`tma: ${label} already up to date (${path})\n`);
    return 'unchanged';
  }
  const target = after === null ? null : symlinkTarget(path);
  if (target !== null) process.stdout.write(`tma: ${path} is a symbolic link; the change is written at its target ${target}\n`);
  process.stdout.write(`tma: proposed change to ${path} (${label}):\n`);
  process.stdout.write(unifiedDiff(before, after ?? '', colors()));
  if (!o.yes && !(await ask('Apply this change? [y/N] '))) {
    process.stdout.write('tma: aborted; no changes written\n');
    return 'declined';
  }
  // Taken from the file itself, not from `before`: a file read as absent has nothing to keep.
  let kept: ReturnType<typeof backupConfig> | null = null;
  try {
    if (o.backup && existsSync(path)) kept = backupConfig(path);
  } catch (e) {
    throw new InstallError(`${(e as Error).message}; nothing changed`);
  }
  try {
    if (after === null) rmSync(path, { force: true });
    else writeConfigAtomic(path, after);
  } catch (e) {
    throw new InstallError(`cannot write ${path}: ${(e as Error).message}`);
  }
  if (kept)
    process.stdout.write(`tma: the previous ${path} is kept at ${kept.path}${kept.replaced ? ' (replacing an older backup)' : ''}
`);
  return 'written';
}

/** Release stdin so the process can exit once prompts are done. */
export function closePrompts(): void {
  void lines?.return?.();
  lines = null;
}
