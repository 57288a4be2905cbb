// How setup reads and writes an agent's config. It reads only a regular file of bounded size (a
// FIFO would hang it, a device or a huge file would fill memory, and none of them is a config),
// and only text it can write back byte for byte: invalid UTF-8 would come back as U+FFFD. It
// writes by a temporary file renamed over the old one, so a kill or a full disk mid-write leaves
// the old file whole; a symlinked config is written at its target, keeping the link.

import {
  chmodSync,
  closeSync,
  copyFileSync,
  existsSync,
  constants,
  fstatSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  readlinkSync,
  readSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
  type Stats,
} from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';

/** An agent's settings file is kilobytes; past this it is not one. */
export const CONFIG_MAX_BYTES = 4 * 1024 * 1024;

export class ConfigFileError extends Error {}

function kind(st: Stats): string {
  if (st.isFIFO()) return 'a FIFO';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device';
  if (st.isDirectory()) return 'a directory';
  if (st.isSocket()) return 'a socket';
  return 'not a regular file';
}

const mib = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MiB`;

/** The file's text, or `exists: false` when there is none. Throws ConfigFileError, one line. */
export function readConfigFile(path: string, max = CONFIG_MAX_BYTES): { text: string; exists: boolean } {
  let fd: number;
  try {
    // Non-blocking: opening a FIFO with no writer would otherwise wait forever.
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { text: '', exists: false };
    throw new ConfigFileError(`cannot read ${path}: ${(e as Error).message}`);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new ConfigFileError(`${path} is ${kind(st)}, not a regular file; refusing to read or edit it`);
    if (st.size > max) throw new ConfigFileError(`${path} is ${mib(st.size)}, over the ${mib(max)} a config may be; refusing to read or edit it`);
    // One byte more than allowed: a file growing while read is caught too.
    const buf = Buffer.alloc(Math.min(st.size, max) + 1);
    let got = 0;
    for (;;) {
      const n = readSync(fd, buf, got, buf.length - got, null);
      if (n === 0) break;
      got += n;
      if (got > max) throw new ConfigFileError(`${path} grew past ${mib(max)} while being read; refusing to read or edit it`);
      if (got === buf.length) break;
    }
    const bytes = buf.subarray(0, got);
    let text: string;
    try {
      text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
    } catch {
      throw new ConfigFileError(`${path} is not valid UTF-8 (at byte ${firstBadByte(bytes)}); refusing to edit bytes it could not write back`);
    }
    return { text, exists: true };
  } catch (e) {
    if (e instanceof ConfigFileError) throw e;
    throw new ConfigFileError(`cannot read ${path}: ${(e as Error).message}`);
  } finally {
    closeSync(fd);
  }
}

/** Offset of the first byte that does not start or continue a valid UTF-8 sequence. */
function firstBadByte(b: Buffer): number {
  let lo = 0;
  let hi = b.length;
  const ok = (n: number) => {
    try {
      // A cut at n may split one sequence; allow up to 3 trailing bytes of it.
      new TextDecoder('utf-8', { fatal: true }).decode(b.subarray(0, n), { stream: true });
      return true;
    } catch {
      return false;
    }
  };
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (ok(mid)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** Where a write to `path` lands: its target when `path` is a symbolic link, else null. */
export function symlinkTarget(path: string): string | null {
  let st: Stats;
  try {
    st = lstatSync(path);
  } catch {
    return null;
  }
  if (!st.isSymbolicLink()) return null;
  try {
    return realpathSync(path);
  } catch {
    // A dangling link: the file it names is created.
    return resolve(dirname(path), readlinkSync(path));
  }
}

/** Write `text` at `path` (at its target if it is a link) by temporary file, fsync and rename. */
export function writeConfigAtomic(path: string, text: string): void {
  const target = symlinkTarget(path) ?? path;
  const dir = dirname(target);
  mkdirSync(dir, { recursive: true });
  let mode = 0o644;
  try {
    mode = statSync(target).mode & 0o7777;
  } catch {
    // A new file: the default mode.
  }
  const tmp = join(dir, `.${basename(target)}.tma-${randomBytes(6).toString('hex')}.tmp`);
  try {
    const fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, mode);
    try {
      writeSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, target);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
}

/** The suffix of the copy kept beside a config before it is changed. */
export const BACKUP_SUFFIX = '.tma-bak';

/**
 * Keep `path` as it is now beside it, at `<path>.tma-bak`: byte for byte, with its mode (a
 * settings file may hold secrets), by temporary file and rename so a crash leaves either the old
 * backup or the new one whole. A symlinked config is copied from its target; the copy sits beside
 * the name the user knows. Returns the backup's path and whether an older backup was replaced.
 */
export function backupConfig(path: string): { path: string; replaced: boolean } {
  const bak = `${path}${BACKUP_SUFFIX}`;
  const replaced = existsSync(bak);
  const tmp = join(dirname(bak), `.${basename(bak)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    copyFileSync(path, tmp, constants.COPYFILE_EXCL);
    chmodSync(tmp, statSync(path).mode & 0o7777);
    renameSync(tmp, bak);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw new ConfigFileError(`cannot keep a backup of ${path} at ${bak}: ${(e as Error).message}`);
  }
  return { path: bak, replaced };
}
