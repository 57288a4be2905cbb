// Where manifests live on disk, and reading their files. Kept free of the schema code (zod), so
// the hot one-shot paths can find and read manifests without loading a validator.

import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tmaConfigDir } from '../shared/config-dir.js';
import type { ManifestFile, ManifestIssue } from './core/types.js';

export type Env = Record<string, string | undefined>;

let cachedRoot: string | null = null;

/**
 * Set only in the single-file build (tools/bundle-single.mjs): the bundled manifests' texts by
 * `agents/x.toml` / `actions/x.toml`, inside the file, as such a host has no manifests/ folder.
 */
declare const TMA_EMBEDDED_MANIFESTS: Record<string, string> | undefined;
const EMBEDDED = typeof TMA_EMBEDDED_MANIFESTS === 'undefined' ? null : TMA_EMBEDDED_MANIFESTS;
const EMBEDDED_ROOT = '(built in)/manifests';

// The sources run from collector/ under vitest and from dist/collector/ once compiled; walking
// up to the folder that holds manifests/agents finds the repository root from either.
function manifestRoot(): string {
  if (cachedRoot !== null) return cachedRoot;
  if (EMBEDDED) return (cachedRoot = EMBEDDED_ROOT);
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'manifests', 'agents'))) {
      cachedRoot = join(dir, 'manifests');
      return cachedRoot;
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error('bundled manifests not found: no manifests/agents above ' + fileURLToPath(import.meta.url));
    dir = parent;
  }
}

export function bundledManifestDir(): string {
  return join(manifestRoot(), 'agents');
}

export function bundledActionDir(): string {
  return join(manifestRoot(), 'actions');
}

export function userManifestDir(env: Env): string {
  return join(tmaConfigDir(env), 'agents');
}

export function userActionDir(env: Env): string {
  return join(tmaConfigDir(env), 'actions');
}

/**
 * Every `*.toml` file in `dir`, sorted by file name; a missing directory has none. A file that
 * cannot be read is reported into `issues` when given (so one bad user file does not hide the
 * rest), and thrown otherwise.
 */
export function readManifestFiles(dir: string, issues?: ManifestIssue[]): ManifestFile[] {
  if (EMBEDDED && dir.startsWith(`${EMBEDDED_ROOT}/`)) {
    const kind = `${dir.slice(EMBEDDED_ROOT.length + 1)}/`;
    return Object.keys(EMBEDDED)
      .filter((k) => k.startsWith(kind))
      .sort()
      .map((k) => ({ path: `${EMBEDDED_ROOT}/${k}`, text: EMBEDDED[k]! }));
  }
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return [];
    throw e;
  }
  const files: ManifestFile[] = [];
  for (const name of names.filter((n) => n.endsWith('.toml')).sort()) {
    const path = join(dir, name);
    try {
      // statSync follows symlinks, so a linked manifest counts and a folder named x.toml doesn't.
      if (!statSync(path).isFile()) continue;
      files.push({ path, text: readFileSync(path, 'utf8') });
    } catch (e) {
      if (!issues) throw e;
      issues.push({ file: path, problem: `cannot read: ${(e as Error).message}` });
    }
  }
  return files;
}
