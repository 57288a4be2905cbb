// The README is a landing page: short enough to read first, with every link pointing at a page
// (or picture) that exists, and the two commands a fresh machine needs still the first block.
// The manual lives in docs/, one page per topic.

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const REPO = join(dirname(fileURLToPath(import.meta.url)), '../..');
const readme = readFileSync(join(REPO, 'README.md'), 'utf8');

it('is at most 150 lines', () => {
  expect(readme.split('\n').length).toBeLessThanOrEqual(150);
});

it('starts with the two commands', () => {
  const block = /## Two commands\n\n```sh\n([^`]+)```/.exec(readme)?.[1] ?? '';
  expect(
    block
      .split('\n')
      .filter(Boolean)
      .map((l) => l.replace(/\s+#.*$/, '')),
  ).toEqual(['npm ci && npm start', 'npm test']);
});

it('links only to files that exist, and every docs page is linked', () => {
  const targets = [...readme.matchAll(/\]\(([^)#\s]+)\)|src="([^"]+)"/g)].map((m) => m[1] ?? m[2]!).filter((t) => !/^https?:/.test(t));
  expect(targets.length).toBeGreaterThan(10);
  for (const t of targets) expect(existsSync(join(REPO, t)), t).toBe(true);
  const pages = readdirSync(join(REPO, 'docs')).filter((f) => f.endsWith('.md'));
  for (const p of pages) expect(targets, p).toContain(`docs/${p}`);
});
