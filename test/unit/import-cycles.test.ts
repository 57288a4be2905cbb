// No import circles among the project's own files: a module that imports one that imports it back
// depends on load order, and a room that leans on another in both directions is one room. Every
// import counts, type-only and dynamic ones too, since either way the two files cannot be read
// (or split) apart.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, circles, rel, resolveImport, specifiers, tsFiles } from '../support/import-graph.js';

const FOLDERS = ['cli', 'collector', 'hub', 'shared', 'bench'];

function projectGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const f of FOLDERS.flatMap((d) => tsFiles(join(ROOT, d), ['.ts', '.js', '.mjs']))) {
    const to = specifiers(readFileSync(f, 'utf8'))
      .map((s) => resolveImport(f, s))
      .filter((p): p is string => p !== null);
    graph.set(rel(f), [...new Set(to.map(rel))]);
  }
  return graph;
}

describe('import circles', () => {
  it('the finder sees a circle of two, of three and a self-import, and not a diamond', () => {
    const g = (edges: Record<string, string[]>) => new Map(Object.entries(edges));
    expect(circles(g({ a: ['b'], b: ['a'] }))).toEqual([['a', 'b']]);
    expect(circles(g({ a: ['b'], b: ['c'], c: ['a'], d: ['a'] }))).toEqual([['a', 'b', 'c']]);
    expect(circles(g({ a: ['a'] }))).toEqual([['a']]);
    expect(circles(g({ a: ['b', 'c'], b: ['d'], c: ['d'], d: [] }))).toEqual([]);
  });

  it('the graph resolves `.js` specifiers to the sources they name', () => {
    const graph = projectGraph();
    expect(graph.get('hub/server.ts')).toContain('hub/store/memory-store.ts');
    expect(graph.get('hub/web/page.js')).toContain('hub/web/format.js');
  });

  it('a lazy import and a type import count: a verb table and a verb that imports it back are a circle', () => {
    const table = "export const T = { a: () => import('./verbs/a.js') };";
    const verb = "import type { T } from '../table.js';\nexport const main = 1;";
    expect(specifiers(table)).toEqual(['./verbs/a.js']);
    expect(specifiers(verb)).toEqual(['../table.js']);
  });

  it('no circle anywhere in the project', () => {
    expect(circles(projectGraph()).map((c) => c.join(' <-> '))).toEqual([]);
  });
});
