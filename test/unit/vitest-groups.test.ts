// The integration files kept serial (vitest.config.ts TIMING_FILES) are files that exist: a
// renamed one would otherwise drop silently into the parallel group it was kept out of.

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { TIMING_FILES } from '../../vitest.config.js';

it('every serial timing file exists', () => {
  expect(TIMING_FILES.length).toBeGreaterThan(5);
  for (const f of TIMING_FILES) expect(existsSync(join(import.meta.dirname, '../..', f)), f).toBe(true);
});
