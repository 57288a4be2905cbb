import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

// The hub is a cache of the collectors' truth: it must never pull in detection code.
describe('hub import boundary', () => {
  it('no hub module imports from collector/', () => {
    const dir = join(import.meta.dirname, '../../hub');
    const files = readdirSync(dir).filter((f) => f.endsWith('.ts'));
    expect(files.length).toBeGreaterThan(0);
    const offenders = files.filter((f) => /from\s+['"][^'"]*collector\//.test(readFileSync(join(dir, f), 'utf8')));
    expect(offenders).toEqual([]);
  });
});
