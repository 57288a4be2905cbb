// The package as a user gets it: `npm pack`, install the tarball into an empty prefix, run the
// verbs from there. It proves the tarball carries everything tma reads at run time (dist/, the
// bundle, the page files, manifests, bridges) and nothing only a developer needs (test/, bench/).
// The tarball is packed with --ignore-scripts from the dist/ this suite has already built
// (`npm test` builds first); `prepack` does that build for a real `npm pack`.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/ports.js';
import { when } from '../support/when.js';
import { REPO } from '../support/scratch-tmux.js';

const dir = mkdtempSync(join(tmpdir(), 'tma-pack-'));
const prefix = join(dir, 'prefix');
const home = join(dir, 'home');
const env = { ...process.env, HOME: home, XDG_CONFIG_HOME: join(home, '.config'), XDG_STATE_HOME: join(home, '.state'), TMUX_TMPDIR: home, TMUX: '' };
const tma = () => join(prefix, 'bin', 'tma');
let tarball = '';
let files: string[] = [];
const children: ChildProcess[] = [];

function start(args: string[]): { child: ChildProcess; out: () => string; exited: Promise<number | null> } {
  const child = spawn(tma(), args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  child.stdout.on('data', (d) => (out += String(d)));
  child.stderr.on('data', (d) => (out += String(d)));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return { child, out: () => out, exited };
}

beforeAll(() => {
  execFileSync('mkdir', ['-p', prefix, home]);
  const packed = execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], { cwd: REPO, encoding: 'utf8', timeout: 60_000 });
  const info = JSON.parse(packed) as { filename: string; files: { path: string }[] }[];
  tarball = join(dir, info[0]!.filename);
  files = info[0]!.files.map((f) => f.path);
  // Dependencies come from the npm cache `npm ci` filled; no slow downloads in CI.
  execFileSync('npm', ['i', '-g', '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund', '--omit=dev', tarball], {
    env,
    encoding: 'utf8',
    timeout: 120_000,
  });
}, 180_000);

afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

describe('the packed tarball', () => {
  it('holds dist/ and the runtime files, and no tests or benches', () => {
    expect(files.some((f) => f.startsWith('dist/bundle/cli/main.js'))).toBe(true);
    expect(files).toContain('dist/cli/main.js');
    expect(files).toContain('hub/web/index.html');
    expect(files).toContain('bin/tma-hook');
    expect(files).toContain('LICENSE');
    expect(files.some((f) => f.startsWith('manifests/agents/'))).toBe(true);
    expect(files.filter((f) => /(^|\/)(test|bench)\//.test(f))).toEqual([]);
    const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as Record<string, unknown>;
    expect(pkg.private).toBeUndefined();
    expect((pkg.scripts as Record<string, string>).prepack).toContain('build');
  });

  it('installs into an empty prefix with no devDependencies and answers --version', () => {
    expect(readdirSync(join(prefix, 'lib', 'node_modules', 'tma-fleet', 'node_modules'))).not.toContain('vitest');
    const v = execFileSync(tma(), ['--version'], { env, encoding: 'utf8', timeout: 20_000 });
    expect(v).toMatch(/\d+\.\d+\.\d+/);
    const npx = execFileSync('npx', ['--yes', '--prefer-offline', '--package', tarball, 'tma', '--version'], { env, encoding: 'utf8', timeout: 60_000 });
    expect(npx.trim()).toBe(v.trim());
  }, 90_000);

  it('tma ls answers with no tmux server running', () => {
    const r = spawnSyncText(tma(), ['ls']);
    expect(r.out).not.toMatch(/not built yet|Cannot find module|ERR_MODULE_NOT_FOUND/);
    expect(r.code).not.toBeNull();
  });

  it('tma hub serves /healthz and exits on SIGTERM; tma collector reports and exits on SIGTERM', async () => {
    const port = await freePort();
    const hub = start(['hub', '--listen', `127.0.0.1:${port}`, '--no-local']);
    await when(
      'the installed hub answers /healthz',
      async () => {
        try {
          const r = await fetch(`http://127.0.0.1:${port}/healthz`);
          return r.ok ? true : undefined;
        } catch {
          return undefined;
        }
      },
      30_000,
    );
    const page = await fetch(`http://127.0.0.1:${port}/`);
    expect(page.status).not.toBe(500);

    const tokenFile = join(home, 'stray.token');
    writeFileSync(tokenFile, 'not-a-known-token\n', { mode: 0o600 });
    const col = start(['collector', '--hub', `ws://127.0.0.1:${port}`, '--token-file', tokenFile, '--host-name', 'packed']);
    await when('the installed collector reports on its link', () => (/refus|reject|unauthori|401|403|token/i.test(col.out()) ? true : undefined), 30_000);
    expect(col.out()).not.toMatch(/Cannot find module|ERR_MODULE_NOT_FOUND/);

    col.child.kill('SIGTERM');
    hub.child.kill('SIGTERM');
    const bound = (p: Promise<number | null>) => Promise.race([p.then(() => 'exited'), new Promise((r) => setTimeout(() => r('still running'), 10_000))]);
    expect(await bound(col.exited)).toBe('exited');
    expect(await bound(hub.exited)).toBe('exited');
  }, 60_000);
});

function spawnSyncText(cmd: string, args: string[]): { code: number | null; out: string } {
  try {
    return { code: 0, out: execFileSync(cmd, args, { env, encoding: 'utf8', timeout: 20_000, stdio: ['ignore', 'pipe', 'pipe'] }) };
  } catch (e) {
    const err = e as { status: number | null; stdout?: string; stderr?: string };
    return { code: err.status, out: `${err.stdout ?? ''}${err.stderr ?? ''}` };
  }
}
