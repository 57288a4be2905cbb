#!/usr/bin/env node
// Entry point. The TypeScript sources compile to dist/ (`npm run build`), which also bundles the
// command line into dist/bundle/cli/ for a quicker start. The bundle runs unless the tsc output is
// newer (a build by tsc alone) or TMA_BUNDLE=0 asks for the unbundled modules.
import { statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const mtime = (u) => statSync(fileURLToPath(u), { throwIfNoEntry: false })?.mtimeMs;
const modules = new URL('../dist/cli/main.js', import.meta.url);
const bundle = new URL('../dist/bundle/cli/main.js', import.meta.url);
const built = mtime(modules);
const bundled = process.env.TMA_BUNDLE === '0' ? undefined : mtime(bundle);
if (built === undefined && bundled === undefined) {
  process.stderr.write('tma: not built yet; run `npm run build` in the project folder first\n');
  process.exit(1);
}
const main = bundled !== undefined && (built === undefined || bundled >= built) ? bundle : modules;
const { run } = await import(main.href);
process.exitCode = await run(process.argv.slice(2));
