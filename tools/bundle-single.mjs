// The self-contained collector: `tma` in one CommonJS file with every npm package and the
// bundled manifests inside (dist/single/tma.cjs), for a host that has a node binary and no npm;
// and, with --sea, that file built into a single executable per platform (Node's SEA) for a host
// with neither. `node tools/bundle-single.mjs [--sea [--platforms=linux-x64,linux-arm64]]`.
//
// Code that finds the package's own files from its module (import.meta.url) is pointed at the
// file itself; the manifests are read from the embedded table instead of manifests/ (see
// collector/manifest-dirs.ts). What still needs files beside it (install-hooks' bin/tma-hook, the
// hub's page files) is for the npm package; the collector and the one-shot verbs need none.

import { build } from 'esbuild';
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const out = join(root, 'dist', 'single');
const args = process.argv.slice(2);
const sea = args.includes('--sea');
// The injector of Node's own SEA docs, pinned.
const POSTJECT = '1.0.0-alpha.6';
const platforms = (args.find((a) => a.startsWith('--platforms='))?.slice(12) ?? `linux-${process.arch}`).split(',');

/** manifests/<kind>/<name>.toml, keyed by `<kind>/<name>.toml`. */
function manifests() {
  const table = {};
  for (const kind of ['agents', 'actions']) {
    for (const name of readdirSync(join(root, 'manifests', kind))
      .filter((n) => n.endsWith('.toml'))
      .sort()) {
      table[`${kind}/${name}`] = readFileSync(join(root, 'manifests', kind, name), 'utf8');
    }
  }
  return table;
}

const version = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version;
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const file = join(out, 'tma.cjs');
await build({
  absWorkingDir: root,
  entryPoints: ['cli/single-file.ts'],
  outfile: file,
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  minify: true,
  legalComments: 'none',
  logLevel: 'warning',
  // ssh2's optional native speed-ups are required inside try/catch: without them it uses JS.
  external: ['cpu-features', '*.node'],
  banner: { js: `#!/usr/bin/env node\nconst TMA_SELF_URL = require('node:url').pathToFileURL(__filename).href;` },
  define: { 'import.meta.url': 'TMA_SELF_URL', TMA_EMBEDDED_MANIFESTS: JSON.stringify(manifests()), TMA_SINGLE_FILE: 'true' },
});
chmodSync(file, 0o755);
const made = [file];

if (sea) {
  // Node's single executable: a blob of the script injected into a copy of a node binary. The
  // binary of another platform comes from npm (node-<platform>, the official build repackaged).
  const blob = join(out, 'sea.blob');
  writeFileSync(join(out, 'sea.json'), JSON.stringify({ main: file, output: blob, disableExperimentalSEAWarning: true }));
  execFileSync(process.execPath, ['--experimental-sea-config', join(out, 'sea.json')], { stdio: 'inherit' });
  for (const platform of platforms) {
    const exe = join(out, `tma-${version}-${platform}`);
    copyFileSync(nodeBinary(platform), exe);
    chmodSync(exe, 0o755);
    execFileSync(
      process.execPath,
      [
        buildTool('postject', POSTJECT, join('dist', 'cli.js')),
        exe,
        'NODE_SEA_BLOB',
        blob,
        '--sentinel-fuse',
        'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2',
      ],
      { stdio: 'ignore' },
    );
    made.push(exe);
  }
  rmSync(blob);
  rmSync(join(out, 'sea.json'));
}

/** This node for this platform; another platform's official binary of the same version from npm. */
function nodeBinary(platform) {
  if (platform === `${process.platform}-${process.arch}`) return process.execPath;
  // Unpacked, not installed: npm refuses to install a package made for another cpu.
  const pkg = `node-${platform}@${process.versions.node}`;
  const dir = join(root, 'node_modules', '.cache', 'tma-build', pkg);
  const bin = join(dir, 'package', 'bin', 'node');
  if (!existsSync(bin)) {
    mkdirSync(dir, { recursive: true });
    const tgz = execFileSync('npm', ['pack', '--silent', '--pack-destination', dir, pkg], { encoding: 'utf8' }).trim().split('\n').pop();
    execFileSync('tar', ['-xzf', join(dir, tgz), '-C', dir]);
  }
  return bin;
}

/**
 * A file of an npm package used only to build the executables, installed once into its own
 * prefix under node_modules/.cache (not a dependency of the package: users never need it).
 */
function buildTool(pkg, version, rel) {
  const prefix = join(root, 'node_modules', '.cache', 'tma-build', `${pkg}-${version}`);
  const path = join(prefix, 'node_modules', pkg, rel);
  if (!existsSync(path)) {
    mkdirSync(prefix, { recursive: true });
    execFileSync('npm', ['install', '--prefix', prefix, '--no-save', '--no-audit', '--no-fund', '--ignore-scripts', `${pkg}@${version}`], { stdio: 'inherit' });
  }
  return path;
}

const sums = made.map((f) => `${createHash('sha256').update(readFileSync(f)).digest('hex')}  ${f.slice(out.length + 1)}`);
writeFileSync(join(out, 'SHA256SUMS'), sums.join('\n') + '\n');
for (const f of made) console.log(`${f.slice(root.length)}  ${(statSync(f).size / 1e6).toFixed(1)} MB`);
