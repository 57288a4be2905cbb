// Vitest setup file of the integration projects: private folders per test file (private-dirs.ts),
// gone after the file's last test.

import { afterAll } from 'vitest';
import { dropPrivateDirs, usePrivateDirs } from './private-dirs.js';

const root = usePrivateDirs();
afterAll(() => {
  dropPrivateDirs(root);
});
