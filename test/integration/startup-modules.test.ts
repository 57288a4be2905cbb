// The verbs a status bar or an agent's hook runs over and over must start without the heavy
// packages (schema validation, TOML, logging, the hub's web stack, ssh). Not a timed test: every
// module the process resolves is recorded by a preload (test/support/module-trace.mjs) and the
// list is checked. A static import of, say, zod anywhere on these paths fails it, and so does a
// cache (manifests, config.toml) that stops sparing the validation.

import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { REPO, ScratchTmux, tma } from '../support/scratch-tmux.js';
import { SCREENS } from '../support/screens.js';

const HEAVY = ['zod', 'smol-toml', 'pino', 'hono', '@hono/node-server', 'ws', 'ssh2', 'execa'];

let t: ScratchTmux;
beforeEach(() => {
  t = new ScratchTmux('start');
});
afterEach(() => t.kill());

/** Run a verb under the module trace; returns the packages it loaded from node_modules. */
async function packagesLoaded(args: string[], env: Record<string, string>): Promise<string[]> {
  const trace = join(t.dir, 'trace');
  writeFileSync(trace, '');
  const r = await tma(args, {
    env: { ...env, TMA_MODULE_TRACE: trace, NODE_OPTIONS: `--import=${join(REPO, 'test/support/module-trace.mjs')}` },
  });
  expect(r.code, r.stderr).toBe(0);
  const pkgs = new Set<string>();
  for (const url of readFileSync(trace, 'utf8').split('\n')) {
    const m = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
    if (m) pkgs.add(m[1]!);
  }
  return [...pkgs].sort();
}

it('status, ls and the event fallback load none of the heavy packages once manifests are cached', async () => {
  const pane = t.start();
  await t.standIn(pane, 'claude', SCREENS.claudeIdle);
  t.newPane();
  const env = { XDG_CACHE_HOME: join(t.dir, 'cache'), XDG_CONFIG_HOME: join(t.dir, 'cfg') };
  const server = ['-L', t.name];

  // The first run validates the manifests (zod, smol-toml) and caches them: the trace sees it.
  const cold = await packagesLoaded([...server, 'status'], env);
  expect(cold).toEqual(expect.arrayContaining(['smol-toml', 'zod']));

  const heavy = (pkgs: string[]) => pkgs.filter((p) => HEAVY.includes(p));
  expect(heavy(await packagesLoaded([...server, 'status'], env))).toEqual([]);
  expect(heavy(await packagesLoaded([...server, 'status', '--format', 'json'], env))).toEqual([]);
  expect(heavy(await packagesLoaded([...server, 'ls', '--json'], env))).toEqual([]);
  expect(heavy(await packagesLoaded([...server, 'ls'], env))).toEqual([]);
  expect(t.option(pane, '@agent_name')).toBe('claude');
  expect(
    heavy(await packagesLoaded(['event', '--agent', 'claude', '--kind', 'UserPromptSubmit', ...server, '--payload', '-'], { ...env, TMUX_PANE: pane })),
  ).toEqual([]);
  expect(t.option(pane, '@agent_state')).toBe('working');

  // A config.toml (a status bar restyled) is validated once, then served from the cache too.
  mkdirSync(join(t.dir, 'cfg', 'tma'), { recursive: true });
  writeFileSync(join(t.dir, 'cfg', 'tma', 'config.toml'), '[status]\nworking = { glyph = "W", color = "colour33" }\n');
  expect(await packagesLoaded([...server, 'status'], env)).toEqual(expect.arrayContaining(['smol-toml', 'zod']));
  expect(heavy(await packagesLoaded([...server, 'status'], env))).toEqual([]);
  expect((await tma([...server, 'status', '--format', 'plain'], { env })).stdout).toMatch(/W1/);
});
