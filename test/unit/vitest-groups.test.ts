// The timing-sensitive integration files run one at a time, after the rest: a name in that list
// that no longer matches a file (renamed, moved) would quietly send its file back into the
// parallel workers, where a loaded machine makes its latency bounds flaky.

import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import config, { TIMING_FILES } from '../../vitest.config.js';
import { ROOT } from '../support/import-graph.js';

interface Project {
  test: { name: string; include?: string[]; exclude?: string[]; fileParallelism?: boolean; setupFiles?: string[]; sequence?: { groupOrder?: number } };
}
const projects = (config.test?.projects ?? []) as Project[];
const project = (name: string) => projects.find((p) => p.test.name === name)!.test;

describe('vitest groups', () => {
  it('names only integration files that exist, each once', () => {
    expect(TIMING_FILES.length).toBeGreaterThan(0);
    expect(TIMING_FILES.filter((f) => !existsSync(join(ROOT, f)))).toEqual([]);
    expect(new Set(TIMING_FILES).size).toBe(TIMING_FILES.length);
  });

  it('runs the timing files alone, after the parallel ones, and every other file in parallel', () => {
    const timing = project('integration-timing');
    expect(timing.include).toEqual(TIMING_FILES);
    expect(timing.fileParallelism).toBe(false);
    expect(timing.sequence?.groupOrder).toBeGreaterThan(project('integration').sequence?.groupOrder ?? 0);
    expect(project('integration').exclude).toEqual(TIMING_FILES);
    const all = readdirSync(join(ROOT, 'test/integration')).filter((f) => f.endsWith('.test.ts'));
    expect(all.length).toBeGreaterThan(TIMING_FILES.length);
  });

  it('gives every integration file its own folders, in both groups', () => {
    for (const name of ['integration', 'integration-timing']) expect(project(name).setupFiles).toEqual(['test/support/private-dirs-setup.ts']);
  });
});
