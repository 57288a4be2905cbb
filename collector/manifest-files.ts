// Loading manifests from disk: the directories (manifest-dirs.ts) read, then validated by the
// pure loaders in collector/core.

import { loadActionSet, type ActionSet } from './core/action-manifest.js';
import { loadManifestSet } from './core/manifest-load.js';
import type { ManifestIssue, ManifestSet } from './core/types.js';
import { bundledActionDir, bundledManifestDir, readManifestFiles, userActionDir, userManifestDir, type Env } from './manifest-dirs.js';

export { bundledActionDir, bundledManifestDir, readManifestFiles, userActionDir, userManifestDir };

/**
 * The agent manifests a command runs with. An explicit `manifestDir` (`--manifest-dir`) is a
 * closed set: only its files, no bundled ones, so tests see exactly what they put there.
 * Otherwise the bundled six plus the user's directory.
 */
export function loadAgentManifests(opts: { manifestDir?: string | undefined; env: Env }): ManifestSet {
  const readIssues: ManifestIssue[] = [];
  let set: ManifestSet;
  if (opts.manifestDir !== undefined && opts.manifestDir !== '') {
    set = loadManifestSet([], readManifestFiles(opts.manifestDir, readIssues));
  } else {
    const bundled = readManifestFiles(bundledManifestDir());
    set = loadManifestSet(bundled, readManifestFiles(userManifestDir(opts.env), readIssues));
  }
  return { manifests: set.manifests, issues: [...readIssues, ...set.issues] };
}

/** The action set `tma act` runs with: bundled plus the user's directory (all-or-nothing). */
export function loadActions(opts: { env: Env }): ActionSet {
  const readIssues: ManifestIssue[] = [];
  const user = readManifestFiles(userActionDir(opts.env), readIssues);
  const set = loadActionSet(readManifestFiles(bundledActionDir()), user);
  if (readIssues.length === 0) return set;
  return { ok: false, issues: [...readIssues, ...(set.ok ? [] : set.issues)] };
}
