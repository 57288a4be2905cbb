// The entry of the single-file build (tools/bundle-single.mjs): the whole command line in one
// file that needs only a node binary, or none once it is built into an executable. It runs the
// same `run` as bin/tma.js, without bin/tma.js's quick-status path (a status bar on such a host
// pays the full start).

import { run } from './main.js';

void run(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
