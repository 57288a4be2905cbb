// Reading a source file's imports, for the tests that hold the project's layering
// (import-boundaries, hub-boundary) and its lack of import circles (import-cycles). The comment
// stripper is not a parser: the tests check it still sees an import they append to each file.

import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '../..');

/** Files under `dir` whose names end in one of `exts` (TypeScript sources by default). */
export function tsFiles(dir: string, exts: readonly string[] = ['.ts']): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...tsFiles(p, exts));
    else if (exts.some((e) => name.endsWith(e))) out.push(p);
  }
  return out;
}

/** Source with comments blanked, so prose about a rule does not count as breaking it. */
export function withoutComments(src: string): string {
  let out = '';
  let i = 0;
  let quote: string | null = null;
  while (i < src.length) {
    const c = src[i]!;
    const next = src[i + 1];
    if (quote) {
      out += c;
      if (c === '\\') {
        out += next ?? '';
        i += 2;
        continue;
      }
      if (c === quote) quote = null;
      i++;
      continue;
    }
    if (c === '"' || c === "'" || c === '`') {
      quote = c;
      out += c;
      i++;
      continue;
    }
    if (c === '/' && next === '/') {
      while (i < src.length && src[i] !== '\n') i++;
      continue;
    }
    if (c === '/' && next === '*') {
      const end = src.indexOf('*/', i + 2);
      i = end < 0 ? src.length : end + 2;
      out += ' ';
      continue;
    }
    out += c;
    i++;
  }
  return out;
}

/** Every module specifier a file imports or re-exports, statically or dynamically. */
export function specifiers(src: string): string[] {
  const code = withoutComments(src);
  const out: string[] = [];
  for (const m of code.matchAll(/\b(?:import|export)\b[^'"`;]*?\bfrom\s*['"]([^'"]+)['"]/g)) out.push(m[1]!);
  for (const m of code.matchAll(/\bimport\s*['"]([^'"]+)['"]/g)) out.push(m[1]!);
  for (const m of code.matchAll(/\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g)) out.push(m[1]!);
  return out;
}

/** The repository folder a relative specifier lands in (`collector/core`, `shared`, …), or null for a package. */
export function landsIn(file: string, spec: string): string | null {
  if (!spec.startsWith('.')) return null;
  return relative(ROOT, resolve(dirname(file), spec))
    .split(sep)
    .join('/');
}

export const under = (path: string, folder: string) => path === folder || path.startsWith(`${folder}/`);

/** Repository path with forward slashes. */
export const rel = (f: string): string => relative(ROOT, f).split(sep).join('/');

/** The file a relative specifier names: `x.js` is the source `x.ts` when there is one. */
export function resolveImport(file: string, spec: string): string | null {
  if (!spec.startsWith('.')) return null;
  const p = resolve(dirname(file), spec);
  if (p.endsWith('.js') && existsSync(`${p.slice(0, -3)}.ts`)) return `${p.slice(0, -3)}.ts`;
  return existsSync(p) ? p : null;
}

/** Strongly connected groups of more than one file (or a file importing itself): import circles. */
export function circles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const group: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      group.push(w);
    } while (w !== v);
    if (group.length > 1 || (graph.get(v) ?? []).includes(v)) out.push(group.sort());
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return out;
}
