#!/usr/bin/env node
// Entry point. The TypeScript sources compile to dist/ (`npm run build`).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const main = new URL('../dist/cli/main.js', import.meta.url);
if (!existsSync(fileURLToPath(main))) {
  process.stderr.write('tma: not built yet; run `npm run build` in the project folder first\n');
  process.exit(1);
}
const { run } = await import(main.href);
process.exitCode = await run(process.argv.slice(2));
