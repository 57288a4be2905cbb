import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { canonicalSocketPath } from '../../collector/fleet/wake.js';
import { discover } from '../../collector/fleet/discovery.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

it('a server already followed is listed without a probe; any other must answer', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tma-discover-known-'));
  dirs.push(dir);
  const followed = join(dir, 'followed');
  const other = join(dir, 'other');
  // Neither socket exists: only the followed one may come back, and without a connection attempt.
  const found = await discover({ names: [], paths: [followed, other], env: {}, known: new Set([canonicalSocketPath(followed)]) });
  expect(found.map((d) => d.key)).toEqual([canonicalSocketPath(followed)]);
  expect(await discover({ names: [], paths: [followed, other], env: {} })).toEqual([]);
});
