// Agent manifests for commands that start often (`tma status` runs every second in a status bar,
// `tma event` on every hook). Validating TOML means loading the schema library, which costs more
// than the rest of such a command; so the validated set is kept on disk, keyed by the exact bytes
// of every manifest file and the engine version, and revived from there while nothing changed.
// Any change of a file, a new file or a new engine is a different key: the set is validated again.

import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import type { ManifestFile, ManifestIssue, ManifestSet } from './core/types.js';
import { ENGINE_VERSION } from './core/version.js';
import { bundledManifestDir, readManifestFiles, userManifestDir, type Env } from './manifest-dirs.js';

const FORMAT = 1;

function cacheDir(env: Env): string {
  const xdg = env['XDG_CACHE_HOME'];
  return join(xdg && isAbsolute(xdg) ? xdg : join(env['HOME'] || homedir(), '.cache'), 'tma');
}

// Hashed natively: a hash written in JS runs cold in a short-lived process and cost more than
// reading the cache itself.
function keyOf(bundled: ManifestFile[], user: ManifestFile[]): string {
  const h = createHash('sha256').update(`v${FORMAT}\u0001${ENGINE_VERSION}`);
  for (const [tag, files] of [['b', bundled], ['u', user]] as const) {
    for (const f of files) h.update(`\u0001${tag}\u0000${f.path}\u0000${f.text}`);
  }
  return h.digest('hex').slice(0, 16);
}

/** Compiled regexes survive the round trip as their source and flags. */
export function serializeSet(set: ManifestSet): string {
  return JSON.stringify(set, (_k, v: unknown) => (v instanceof RegExp ? { $regexp: [v.source, v.flags] } : v));
}

export function reviveSet(text: string): ManifestSet {
  return JSON.parse(text, (_k, v: unknown) => {
    const re = (v as { $regexp?: [string, string] } | null)?.$regexp;
    return Array.isArray(re) ? new RegExp(re[0], re[1]) : v;
  }) as ManifestSet;
}

function readCache(path: string): ManifestSet | null {
  try {
    return reviveSet(readFileSync(path, 'utf8'));
  } catch {
    return null;
  }
}

/** Best effort: a cache that cannot be written only costs the next command the validation. */
function writeCache(dir: string, name: string, set: ManifestSet): void {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const tmp = join(dir, `${name}.${process.pid}.tmp`);
    writeFileSync(tmp, serializeSet(set), { mode: 0o600 });
    renameSync(tmp, join(dir, name));
    for (const old of readdirSync(dir)) {
      if (old !== name && /^manifests-[0-9a-f]{16}\.json$/.test(old)) unlinkSync(join(dir, old));
    }
  } catch {
    // read-only or full disk: fine
  }
}

/**
 * The bundled manifests plus the user's (or only `--manifest-dir`'s, a closed set), validated —
 * from the cache when the files are byte-identical to what was validated last.
 */
export async function loadAgentManifestsCached(opts: { manifestDir?: string | undefined; env: Env }): Promise<ManifestSet> {
  const readIssues: ManifestIssue[] = [];
  const closed = opts.manifestDir !== undefined && opts.manifestDir !== '';
  const bundled = closed ? [] : readManifestFiles(bundledManifestDir());
  const user = readManifestFiles(closed ? opts.manifestDir! : userManifestDir(opts.env), readIssues);
  const dir = cacheDir(opts.env);
  const name = `manifests-${keyOf(bundled, user)}.json`;
  const set = readCache(join(dir, name)) ?? (await validate(bundled, user, dir, name));
  return { manifests: set.manifests, issues: [...readIssues, ...set.issues] };
}

async function validate(bundled: ManifestFile[], user: ManifestFile[], dir: string, name: string): Promise<ManifestSet> {
  const { loadManifestSet } = await import('./core/manifest-load.js');
  const set = loadManifestSet(bundled, user);
  writeCache(dir, name, set);
  return set;
}
