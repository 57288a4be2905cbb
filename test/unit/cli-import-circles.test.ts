// No import circle runs through cli/ or shared/: the command line loads verbs lazily from its
// table, and a verb that imported the table (or main.ts) back, even lazily or for a type only,
// would make one again (as cli/main.ts ↔ cli/verbs/help.ts and cli/verbs/hub.ts ↔
// cli/verbs/hub-token.ts once did). Every import counts: static, dynamic `import()`, `import type`
// and re-exports. The checker is run on a small sample circle first, so it cannot pass quietly.

import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const FOLDERS = ['cli', 'shared', 'collector', 'hub'];

function tsFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...tsFiles(p));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

/** Relative module specifiers of `src`, comments aside (a line comment or block comment is blanked). */
function importsOf(src: string): string[] {
  const code = src.replace(/\/\*[\s\S]*?\*\//g, ' ').replace(/^\s*\/\/.*$/gm, '');
  const out: string[] = [];
  for (const m of code.matchAll(/\b(?:import|export)\b[^'"`;]*?\bfrom\s*['"](\.[^'"]+)['"]/g)) out.push(m[1]!);
  for (const m of code.matchAll(/\bimport\s*\(\s*['"](\.[^'"]+)['"]\s*\)/g)) out.push(m[1]!);
  return out;
}

/** The import graph of `files` (path → the project files it imports). */
function graphOf(files: Map<string, string>): Map<string, string[]> {
  const g = new Map<string, string[]>();
  for (const [file, src] of files) {
    g.set(
      file,
      importsOf(src)
        .map((s) => resolve(dirname(file), s).replace(/\.js$/, '.ts'))
        .filter((t) => files.has(t)),
    );
  }
  return g;
}

/** Each circle found by a depth-first walk, as the files along it. */
function circles(g: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const walk = (n: string) => {
    state.set(n, 'open');
    path.push(n);
    for (const t of g.get(n) ?? []) {
      if (state.get(t) === 'open') found.push(path.slice(path.indexOf(t)).concat(t));
      else if (!state.has(t)) walk(t);
    }
    path.pop();
    state.set(n, 'done');
  };
  for (const n of g.keys()) if (!state.has(n)) walk(n);
  return found;
}

describe('import circles', () => {
  it('the checker finds a circle made of a lazy import and a type import', () => {
    const sample = new Map([
      ['/x/table.ts', "export const T = { a: () => import('./verbs/a.js') };"],
      ['/x/verbs/a.ts', "import type { T } from '../table.js';\nexport const main = 1;"],
      ['/x/leaf.ts', "// import { T } from './table.js';\nexport const leaf = 1;"],
    ]);
    expect(circles(graphOf(sample))).toEqual([['/x/table.ts', '/x/verbs/a.ts', '/x/table.ts']]);
  });

  it('none runs through cli/ or shared/', () => {
    const files = new Map<string, string>();
    for (const f of FOLDERS) if (existsSync(join(ROOT, f))) for (const p of tsFiles(join(ROOT, f))) files.set(p, readFileSync(p, 'utf8'));
    const ours = circles(graphOf(files))
      .map((c) => c.map((p) => relative(ROOT, p)))
      .filter((c) => c.some((p) => p.startsWith('cli/') || p.startsWith('shared/')));
    expect(ours).toEqual([]);
  });
});
