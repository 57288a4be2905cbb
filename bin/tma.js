#!/usr/bin/env node
// Entry point. The TypeScript sources compile to dist/ (`npm run build`), which also bundles the
// command line into dist/bundle/cli/ for a quicker start. The bundle runs unless the tsc output is
// newer (a build by tsc alone) or TMA_BUNDLE=0 asks for the unbundled modules.
//
// This file is CommonJS (bin/package.json): a status bar runs `tma status` every few seconds, and
// a CommonJS entry can answer it from one required file (dist/bundle/cli/status-fast.cjs) without
// starting Node's ESM loader. Everything else, and any status that file declines, runs the ESM
// command line as before.
'use strict';
const { statSync } = require('node:fs');
const { join } = require('node:path');

const mtime = (p) => statSync(p, { throwIfNoEntry: false })?.mtimeMs;
const dist = join(__dirname, '..', 'dist');
const modules = join(dist, 'cli', 'main.js');
const bundleDir = join(dist, 'bundle', 'cli');
const bundle = join(bundleDir, 'main.js');
const built = mtime(modules);
const bundled = process.env.TMA_BUNDLE === '0' ? undefined : mtime(bundle);
if (built === undefined && bundled === undefined) {
  process.stderr.write('tma: not built yet; run `npm run build` in the project folder first\n');
  process.exit(1);
}
const useBundle = bundled !== undefined && (built === undefined || bundled >= built);
const argv = process.argv.slice(2);

/**
 * The quick status's result ({ answered } and maybe the read it made), or null when not tried. It
 * waits at most a short deadline for a running collector's answer, then reads tmux itself.
 */
async function quick() {
  // TMA_QUICK_STATUS=0 always takes the full path (to compare the two).
  if (!useBundle || !argv.includes('status') || process.env.TMA_QUICK_STATUS === '0') return null;
  let fast;
  try {
    fast = require(join(bundleDir, 'status-fast.cjs'));
  } catch {
    return null;
  }
  try {
    return await fast.quickStatus(argv, process.env, bundleDir);
  } catch {
    return null;
  }
}

function full(q) {
  const { pathToFileURL } = require('node:url');
  import(pathToFileURL(useBundle ? bundle : modules).href).then(async ({ run }) => {
    process.exitCode = await run(argv, { statusListing: q?.listing });
  });
}

quick().then((q) => {
  if (!q?.answered) full(q);
});
