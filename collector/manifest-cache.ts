// Agent manifests for commands that start often (`tma status` runs every second in a status bar,
// `tma event` on every hook). Validating TOML means loading the schema library, which costs more
// than the rest of such a command; so the validated set is kept on disk, keyed by the exact bytes
// of every manifest file and the engine version, and revived from there while nothing changed.
// Any change of a file, a new file or a new engine is a different key: the set is validated again.

import { cacheDir, entryName, readEntry, writeEntry } from './disk-cache.js';
import type { ManifestFile, ManifestIssue, ManifestSet } from './core/types.js';
import { ENGINE_VERSION } from './core/version.js';
import { bundledManifestDir, readManifestFiles, userManifestDir, type Env } from './manifest-dirs.js';

const FORMAT = 1;

function keyOf(bundled: ManifestFile[], user: ManifestFile[]): string {
  const parts = [`v${FORMAT}`, ENGINE_VERSION];
  for (const [tag, files] of [
    ['b', bundled],
    ['u', user],
  ] as const) {
    for (const f of files) parts.push(`${tag}\u0000${f.path}\u0000${f.text}`);
  }
  return entryName('manifests', parts);
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

function readCache(dir: string, name: string): ManifestSet | null {
  try {
    const text = readEntry(dir, name);
    return text === null ? null : reviveSet(text);
  } catch {
    return null;
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
  const name = keyOf(bundled, user);
  const set = readCache(dir, name) ?? (await validate(bundled, user, dir, name));
  return { manifests: set.manifests, issues: [...readIssues, ...set.issues] };
}

async function validate(bundled: ManifestFile[], user: ManifestFile[], dir: string, name: string): Promise<ManifestSet> {
  const { loadManifestSet } = await import('./core/manifest-load.js');
  const set = loadManifestSet(bundled, user);
  writeEntry(dir, 'manifests', name, serializeSet(set));
  return set;
}
