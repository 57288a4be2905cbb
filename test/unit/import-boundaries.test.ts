// The layering the project depends on, checked on the source text:
// - shared/ is the common language of collector, hub and CLI, so it may lean on none of them;
// - collector/core/ is the pure detection core: no I/O module, nothing outside core and shared,
//   and no reading of the clock (time always arrives as an argument);
// - only collector/tmux/ starts tmux, so every tmux invocation goes through its runner (test/ and
//   bench/ drive scratch servers directly and are exempt).
// Each checker is also run on small samples that break the rule, so a checker that can no longer
// see a violation fails here instead of passing quietly.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, landsIn, rel, specifiers, tsFiles, under, withoutComments } from '../support/import-graph.js';

// ---- rule 1: shared/ depends on no layer above it ---------------------------------------------

export function sharedOffences(file: string, src: string): string[] {
  return specifiers(src).filter((s) => {
    const to = landsIn(file, s);
    return to !== null && ['collector', 'hub', 'cli'].some((layer) => under(to, layer));
  });
}

// ---- rule 2: collector/core/ is pure ------------------------------------------------------------

/** Packages the core may use: validation and parsing only, no I/O. */
const CORE_PACKAGES = new Set(['zod', 'smol-toml']);

export function coreImportOffences(file: string, src: string): string[] {
  return specifiers(src).filter((s) => {
    const to = landsIn(file, s);
    if (to === null) return !CORE_PACKAGES.has(s);
    return !under(to, 'collector/core') && !under(to, 'shared');
  });
}

const CLOCK_READS: [string, RegExp][] = [
  ['Date.now', /\bDate\s*\.\s*now\b/],
  ['new Date(', /\bnew\s+Date\s*\(/],
  ['Date()', /(?<![.\w]|\bnew\s+)Date\s*\(/],
  ['performance.now', /\bperformance\s*\.\s*now\b/],
  ['process.hrtime', /\bprocess\s*\.\s*hrtime\b/],
  ['process.uptime', /\bprocess\s*\.\s*uptime\b/],
];

export function clockOffences(src: string): string[] {
  const code = withoutComments(src);
  return CLOCK_READS.filter(([, re]) => re.test(code)).map(([name]) => name);
}

// ---- rule 3: only collector/tmux/ starts tmux --------------------------------------------------

const SPAWNERS = /\b(?:spawn|spawnSync|execFile|execFileSync|exec|execSync|fork|execa|execaSync|execaNode)\s*\(\s*['"`]tmux\b/;
const SPAWN_MODULES = /^(?:node:)?child_process$|^execa$/;

export function tmuxSpawnOffences(src: string): string[] {
  const code = withoutComments(src);
  const out: string[] = [];
  if (SPAWNERS.test(code)) out.push('spawns tmux by name');
  // A file that can start processes must not also name the tmux binary: it would be a second runner.
  if (specifiers(src).some((s) => SPAWN_MODULES.test(s)) && /['"`]tmux['"`]|\btmuxBin\s*\(/.test(code)) {
    out.push('starts processes and names the tmux binary');
  }
  return out;
}

// ---- the checkers see what they are meant to see ----------------------------------------------

describe('boundary checkers', () => {
  const fake = (folder: string) => join(ROOT, folder, 'x.ts');

  it('read import specifiers of every form, and ignore commented-out imports', () => {
    const src = [
      "import { a } from './a.js';",
      "import type { B } from '../b.js';",
      "export { c } from './c.js';",
      "import './side.js';",
      "const m = await import('../dyn.js');",
      "// import { gone } from '../commented.js';",
      "/* import { gone2 } from '../block.js'; */",
    ].join('\n');
    expect(specifiers(src)).toEqual(['./a.js', '../b.js', './c.js', './side.js', '../dyn.js']);
  });

  it('flag shared/ reaching into collector/, hub/ or cli/, and nothing else', () => {
    const f = fake('shared');
    expect(sharedOffences(f, "import { x } from '../collector/core/fold.js';")).toEqual(['../collector/core/fold.js']);
    expect(sharedOffences(f, "import { x } from '../hub/store.js';")).toEqual(['../hub/store.js']);
    expect(sharedOffences(f, "const m = await import('../cli/main.js');")).toEqual(['../cli/main.js']);
    expect(sharedOffences(f, "import { x } from './tokens.js';\nimport { z } from 'zod';")).toEqual([]);
    // A sibling folder whose name merely starts like a layer is not that layer.
    expect(sharedOffences(f, "import { x } from '../hubble/x.js';")).toEqual([]);
  });

  it('flag I/O modules and non-core folders imported by the core, not core or shared ones', () => {
    const f = fake('collector/core');
    for (const bad of [
      'node:fs',
      'fs',
      'node:child_process',
      'node:net',
      'node:os',
      'execa',
      'ws',
      '../tmux/runner.js',
      '../engine/cycle.js',
      '../fleet/ring.js',
    ]) {
      expect(coreImportOffences(f, `import x from '${bad}';`)).toEqual([bad]);
    }
    expect(coreImportOffences(f, "import { a } from './fold.js';\nimport { t } from '../../shared/tokens.js';\nimport { z } from 'zod';")).toEqual([]);
  });

  it('flag every way of reading the clock, but not a clock that was passed in', () => {
    expect(clockOffences('const t = Date.now();')).toEqual(['Date.now']);
    expect(clockOffences('const d = new Date(0);')).toEqual(['new Date(']);
    expect(clockOffences('const s = Date();')).toEqual(['Date()']);
    expect(clockOffences('const t = performance.now();')).toEqual(['performance.now']);
    expect(clockOffences('const t = process.hrtime.bigint();')).toEqual(['process.hrtime']);
    expect(clockOffences('export function f(now: number) { return now - 1; }')).toEqual([]);
    expect(clockOffences('// never Date.now(): time is an argument\nconst x = 1;')).toEqual([]);
    expect(clockOffences("const msg = 'see http://example/x'; const t = Date.now();")).toEqual(['Date.now']);
  });

  it('flag a tmux spawn by name, and a process starter that names the tmux binary', () => {
    expect(tmuxSpawnOffences("import { spawn } from 'node:child_process';\nspawn('tmux', ['ls']);")).toHaveLength(2);
    expect(tmuxSpawnOffences("execa('tmux', ['ls']);")).toEqual(['spawns tmux by name']);
    expect(tmuxSpawnOffences("import { execFile } from 'node:child_process';\nconst bin = tmuxBin(env);\nexecFile(bin, []);")).toEqual([
      'starts processes and names the tmux binary',
    ]);
    // Naming tmux as a format or a multiplexer is not starting it.
    expect(tmuxSpawnOffences("const FORMATS = ['tmux', 'plain'];")).toEqual([]);
    expect(tmuxSpawnOffences("import { spawn } from 'node:child_process';\nspawn('sh', ['-c', cmd]);")).toEqual([]);
  });
});

// ---- the repository keeps the rules -------------------------------------------------------------

const read = (f: string) => readFileSync(f, 'utf8');

describe('import boundaries of the repository', () => {
  it('shared/ imports nothing from collector/, hub/ or cli/', () => {
    const files = tsFiles(join(ROOT, 'shared'));
    expect(files.length).toBeGreaterThan(3);
    const offences = files.flatMap((f) => sharedOffences(f, read(f)).map((s) => `${rel(f)}: ${s}`));
    expect(offences).toEqual([]);
  });

  it('collector/core/ imports only core, shared/ and parsing packages', () => {
    const files = tsFiles(join(ROOT, 'collector/core'));
    expect(files.length).toBeGreaterThan(5);
    const offences = files.flatMap((f) => coreImportOffences(f, read(f)).map((s) => `${rel(f)}: ${s}`));
    expect(offences).toEqual([]);
  });

  it('collector/core/ never reads the clock', () => {
    const files = tsFiles(join(ROOT, 'collector/core'));
    // The comment stripper is not a parser: make sure no core file leaves it inside a string or
    // comment at the end, which would hide whatever follows.
    const blind = files.filter((f) => clockOffences(`${read(f)}\nconst probe = Date.now();\n`).length === 0);
    expect(blind.map(rel)).toEqual([]);
    const offences = files.flatMap((f) => clockOffences(read(f)).map((s) => `${rel(f)}: ${s}`));
    expect(offences).toEqual([]);
  });

  it('nothing outside collector/tmux/, test/ and bench/ starts tmux', () => {
    const files = ['cli', 'collector', 'hub', 'shared'].flatMap((d) => tsFiles(join(ROOT, d))).filter((f) => !under(rel(f), 'collector/tmux'));
    expect(files.some((f) => under(rel(f), 'cli/fleet'))).toBe(true);
    const blind = files.filter((f) => tmuxSpawnOffences(`${read(f)}\nspawn('tmux', []);\n`).length === 0);
    expect(blind.map(rel)).toEqual([]);
    const offences = files.flatMap((f) => tmuxSpawnOffences(read(f)).map((s) => `${rel(f)}: ${s}`));
    expect(offences).toEqual([]);
  });
});
