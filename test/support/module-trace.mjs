// Preload (`node --import <this file>`) that appends the URL of every module the process resolves
// to the file named by $TMA_MODULE_TRACE, one per line. Used to prove what a one-shot verb loads
// (test/integration/startup-modules.test.ts) and to count modules in bench/startup.ts.
// Modules that a CommonJS package require()s internally are not seen; its entry point is.
// CommonJS files of our own (bin/tma.js, the quick status bundle) never pass the ESM resolve
// hook, so the CommonJS module cache is listed too when the process exits.

import { appendFileSync } from 'node:fs';
import { createRequire, register } from 'node:module';
import { pathToFileURL } from 'node:url';

if (process.env.TMA_MODULE_TRACE) {
  const out = process.env.TMA_MODULE_TRACE;
  register('./module-trace-hooks.mjs', import.meta.url, { data: { out } });
  const cache = createRequire(import.meta.url).cache;
  process.on('exit', () => {
    const files = Object.keys(cache).filter((f) => f.startsWith('/'));
    if (files.length) appendFileSync(out, files.map((f) => `${pathToFileURL(f).href}\n`).join(''));
  });
}
