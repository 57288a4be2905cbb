// Parsing, `tma help`, `--help` and a usage error are answered from the verb table alone: no
// verb's code, no collector or hub module and no package is loaded for them, and a verb that runs
// loads its own module only. Checked on the tsc output (TMA_BUNDLE=0), where every source file is
// a module of its own, with the module trace preload (test/support/module-trace.mjs).

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { REPO, tma } from '../support/scratch-tmux.js';

const dir = mkdtempSync(join(tmpdir(), 'tma-verb-load-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The project modules (`cli/…`, `collector/…`) and packages one run loaded, and its exit code. */
async function loaded(args: string[]): Promise<{ code: number; modules: string[]; packages: string[] }> {
  const trace = join(dir, 'trace');
  writeFileSync(trace, '');
  const r = await tma(args, {
    env: { TMA_BUNDLE: '0', TMA_HUB: '', TMA_MODULE_TRACE: trace, NODE_OPTIONS: `--import=${join(REPO, 'test/support/module-trace.mjs')}` },
  });
  const urls = readFileSync(trace, 'utf8').split('\n');
  const modules = new Set<string>();
  const packages = new Set<string>();
  for (const u of urls) {
    const pkg = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(u);
    if (pkg) packages.add(pkg[1]!);
    const mod = /\/dist\/((?:cli|collector|hub|shared)\/.*)\.js$/.exec(u);
    if (mod) modules.add(mod[1]!);
  }
  return { code: r.code, modules: [...modules].sort(), packages: [...packages].sort() };
}

/** What the table itself needs: the parser, the entries, their flags, the version, the hand-off. */
const TABLE = ['cli/args', 'cli/handoff', 'cli/main', 'cli/status-flags', 'cli/verb-flags', 'cli/verb-table', 'cli/version'];

it('help, --help and usage errors load the table and nothing of any verb', async () => {
  expect(await loaded(['help'])).toEqual({ code: 0, modules: [...TABLE.slice(0, 2), 'cli/help', ...TABLE.slice(2), 'cli/verbs/help'].sort(), packages: [] });
  expect(await loaded(['jump', '--help'])).toEqual({ code: 0, modules: [...TABLE, 'cli/help'].sort(), packages: [] });
  expect(await loaded(['act', '--help'])).toEqual({ code: 0, modules: [...TABLE, 'cli/help'].sort(), packages: [] });
  expect(await loaded(['ls', '--bogus'])).toEqual({ code: 2, modules: TABLE, packages: [] });
  expect(await loaded(['doctor', 'now'])).toEqual({ code: 2, modules: TABLE, packages: [] });
  expect(await loaded(['nope'])).toEqual({ code: 2, modules: [...TABLE, 'cli/help'].sort(), packages: [] });
});

it("a verb that runs loads its own module, not its neighbours'", async () => {
  expect(await loaded(['completions', 'bash'])).toEqual({ code: 0, modules: [...TABLE, 'cli/verbs/completions'].sort(), packages: [] });
  expect(await loaded(['version'])).toEqual({ code: 0, modules: TABLE, packages: [] });
});
