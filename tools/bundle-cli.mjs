// Bundles the command line into dist/bundle/cli/ (run by `npm run build`, after tsc), so a
// one-shot verb such as `tma status` loads a handful of files instead of every module it touches.
// Each verb stays lazily loaded: code splitting turns every `await import()` of the verb table
// (cli/verb-table.ts) into its own chunk, and npm packages stay outside the bundle (imported from
// node_modules as before), so zod, hono, pino and friends still load only for the verbs that use them.
//
// The chunks sit three folders below the package root, as the tsc output's modules do
// (dist/cli/verbs/x.js), and flat in one folder: code that finds the package's own files relative
// to its module (bin/tma-hook, hub/web/, bin/tma.js, manifests/) resolves them the same way from
// either layout. bin/tma.js runs the bundle when it is at least as new as the tsc output.

import { build } from 'esbuild';
import { readdirSync, statSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const outdir = `${root}dist/bundle/cli`;
const result = await build({
  absWorkingDir: root,
  entryPoints: ['cli/main.ts'],
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  chunkNames: '[name]-[hash]',
  logLevel: 'warning',
  metafile: true,
});

// The quick `tma status` (cli/status-fast.ts) is one CommonJS file with everything it uses inside:
// bin/tma.js requires it before Node's ESM loader is ever started, which alone costs a status bar
// about 10 ms a run. It finds the validated config.toml by the stamp of the chunk that holds the
// config cache's code, as that code does, so it is told that chunk's name here.
const configChunk = Object.entries(result.metafile.outputs).find(([, o]) => 'collector/config/config-cache.ts' in o.inputs)?.[0];
if (!configChunk) throw new Error('bundle-cli: no chunk holds collector/config/config-cache.ts');
const fast = await build({
  absWorkingDir: root,
  entryPoints: ['cli/status-fast.ts'],
  outfile: `${outdir}/status-fast.cjs`,
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  logLevel: 'warning',
  // The config cache's own stamp (import.meta.url) is never read on this path.
  logOverride: { 'empty-import-meta': 'silent' },
  define: { TMA_CONFIG_CHUNK: JSON.stringify(configChunk.split('/').pop()) },
  metafile: true,
});

// Chunk names carry a content hash. A collector or hub started from an earlier build may still
// load one of its chunks lazily, so chunks of other builds are kept for a day, then removed.
const written = new Set([...Object.keys(result.metafile.outputs), ...Object.keys(fast.metafile.outputs)].map((f) => join(root, f)));
for (const name of readdirSync(outdir)) {
  const path = join(outdir, name);
  if (!written.has(path) && Date.now() - statSync(path).mtimeMs > 86_400_000) unlinkSync(path);
}
