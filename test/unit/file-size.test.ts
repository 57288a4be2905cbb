// No source file over 500 lines: past that a file holds more than one thing, and the next person
// has to read all of it to change any of it. test/ and bench/ are exempt (fixtures and harnesses).

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, rel, tsFiles } from '../support/import-graph.js';

const MAX_LINES = 500;

describe('source file size', () => {
  it(`no file in cli/, collector/, hub/ or shared/ is over ${MAX_LINES} lines`, () => {
    const files = ['cli', 'collector', 'hub', 'shared'].flatMap((d) => tsFiles(join(ROOT, d), ['.ts', '.js', '.mjs']));
    expect(files.length).toBeGreaterThan(100);
    const long = files.map((f) => ({ file: rel(f), lines: readFileSync(f, 'utf8').split('\n').length - 1 })).filter((x) => x.lines > MAX_LINES);
    expect(long).toEqual([]);
  });
});
