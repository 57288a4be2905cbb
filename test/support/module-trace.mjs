// Preload (`node --import <this file>`) that appends the URL of every module the process resolves
// to the file named by $TMA_MODULE_TRACE, one per line. Used to prove what a one-shot verb loads
// (test/integration/startup-modules.test.ts) and to count modules in bench/startup.ts.
// Modules that a CommonJS package require()s internally are not seen; its entry point is.

import { register } from 'node:module';

if (process.env.TMA_MODULE_TRACE) {
  register('./module-trace-hooks.mjs', import.meta.url, { data: { out: process.env.TMA_MODULE_TRACE } });
}
