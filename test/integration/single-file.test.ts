// The self-contained collector as a host without npm gets it: tools/bundle-single.mjs builds
// `tma` into one file (every package and the manifests inside) and that file into an executable
// for this platform (Node's SEA), with SHA256SUMS. Each is copied alone into an empty folder far
// from the checkout (no node_modules, no manifests/ to fall back on) and run there as the
// collector of its own host: the hub shows each host's stand-in agent, read by the built-in
// manifests. The executable runs with no node on PATH.

import { execFileSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { FleetDocument } from '../../shared/fleet.js';
import { killChildren, launchLogged } from '../support/children.js';
import { freePort } from '../support/ports.js';
import { REPO, ScratchTmux, tma, waitFor } from '../support/scratch-tmux.js';
import { when } from '../support/when.js';

const SCREENS = join(REPO, 'test/integration/screens');
const out = join(REPO, 'dist', 'single');
const exeName = `tma-${(JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string }).version}-linux-${process.arch}`;
const dir = mkdtempSync(join(tmpdir(), 'tma-single-'));
const children: ChildProcess[] = [];
let scratch: ScratchTmux | null = null;

beforeAll(() => {
  execFileSync(process.execPath, [join(REPO, 'tools/bundle-single.mjs'), '--sea'], { cwd: REPO, stdio: 'pipe', timeout: 120_000 });
}, 150_000);

afterAll(async () => {
  await killChildren(children);
  scratch?.kill();
  rmSync(dir, { recursive: true, force: true });
});

const launch = (cmd: string, args: string[], env: NodeJS.ProcessEnv) => launchLogged(children, cmd, args, env, dir);

it('SHA256SUMS names the file and the executable with their digests', () => {
  const sums = readFileSync(join(out, 'SHA256SUMS'), 'utf8').trim().split('\n');
  expect(sums.map((l) => l.split('  ')[1])).toEqual(['tma.cjs', exeName]);
  for (const line of sums) {
    const [digest, name] = line.split('  ');
    expect(
      createHash('sha256')
        .update(readFileSync(join(out, name!)))
        .digest('hex'),
    ).toBe(digest);
  }
});

it('the single file and the executable each run a host collector from an empty folder', { timeout: 90_000 }, async () => {
  const lone = join(dir, 'host');
  execFileSync('mkdir', ['-p', lone]);
  copyFileSync(join(out, 'tma.cjs'), join(lone, 'tma.cjs'));
  copyFileSync(join(out, exeName), join(lone, 'tma'));
  execFileSync('chmod', ['755', join(lone, 'tma')]);
  const noNode = { PATH: '/usr/bin:/bin' };
  expect(execFileSync(join(lone, 'tma'), ['--version'], { encoding: 'utf8', env: { ...process.env, ...noNode }, cwd: lone }).trim()).toMatch(
    /^tma \d+\.\d+\.\d+/,
  );
  expect(execFileSync(process.execPath, [join(lone, 'tma.cjs'), '--version'], { encoding: 'utf8', cwd: lone }).trim()).toMatch(/^tma \d+\.\d+\.\d+/);

  const env = { XDG_CONFIG_HOME: join(dir, 'cfg'), XDG_STATE_HOME: join(dir, 'state') };
  const port = await freePort();
  const hub = launch(process.execPath, [join(REPO, 'bin/tma.js'), 'hub', '--no-local', '--listen', `127.0.0.1:${port}`], env);
  await waitFor(() => hub.out().includes('fleet view:'), `the hub: ${hub.out().slice(-500)}`, 30_000);
  for (const host of ['onefile', 'onebin']) expect((await tma(['hub', 'token', '--host', host], { env })).code).toBe(0);
  await waitFor(() => hub.out().includes('reload:'), `the reload: ${hub.out().slice(-500)}`, 10_000);

  scratch = new ScratchTmux('single');
  const pane = scratch.start();
  await scratch.standIn(pane, 'claude', join(SCREENS, 'claude-idle-marked.txt'));
  const own = (name: string) => ({
    XDG_RUNTIME_DIR: join(dir, `run-${name}`),
    XDG_CONFIG_HOME: join(dir, `cfg-${name}`),
    XDG_STATE_HOME: join(dir, `st-${name}`),
  });
  const args = (host: string) => [
    'collector',
    '--hub',
    `ws://127.0.0.1:${port}`,
    '--token-file',
    join(dir, 'cfg', 'tma', 'tokens', host),
    '--host-name',
    host,
    '--socket-name',
    scratch!.name,
    '--interval',
    '1',
  ];
  const viaFile = launch(process.execPath, [join(lone, 'tma.cjs'), ...args('onefile')], own('f'));
  const viaBin = launch(join(lone, 'tma'), args('onebin'), { ...own('b'), ...noNode });

  const local = readFileSync(join(dir, 'cfg', 'tma', 'hub.token'), 'utf8').trim();
  const rows = await when(
    'both hosts publishing the stand-in',
    async () => {
      const res = await fetch(`http://127.0.0.1:${port}/v1/agents`, { headers: { authorization: `Bearer ${local}` } });
      const agents = ((await res.json()) as FleetDocument).agents.map((a) => [a.host, a.pane, a.agent, a.state]);
      return agents.length === 2 ? agents.sort() : undefined;
    },
    30_000,
    250,
  ).catch((e: unknown) => {
    throw new Error(`${(e as Error).message}\nfile: ${viaFile.out().slice(-600)}\nbin: ${viaBin.out().slice(-600)}`);
  });
  expect(rows).toEqual([
    ['onebin', pane, 'claude', 'idle'],
    ['onefile', pane, 'claude', 'idle'],
  ]);
});
