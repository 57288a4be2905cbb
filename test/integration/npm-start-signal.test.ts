// `npm start` under a supervisor: npm runs the script through `sh -c` and sends its SIGTERM to that
// shell; a shell waiting on `node … hub` does not pass it on, so the hub lived on, orphaned. The
// script's line after the build is run here exactly as npm runs it (the build itself is left out:
// it would rewrite dist/ under the other tests).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { freePort } from '../support/ports.js';
import { when } from '../support/when.js';
import { REPO } from '../support/scratch-tmux.js';

const home = mkdtempSync(join(tmpdir(), 'tma-start-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));

const up = async (port: number) => {
  try {
    return (await fetch(`http://127.0.0.1:${port}/healthz`)).ok;
  } catch {
    return false;
  }
};

it('SIGTERM to the npm start script stops the hub', async () => {
  const start = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts.start!;
  expect(start.startsWith('npm run build && ')).toBe(true);
  const line = start.slice('npm run build && '.length);
  const port = await freePort();
  const env = { ...process.env, HOME: home, XDG_CONFIG_HOME: join(home, 'c'), XDG_STATE_HOME: join(home, 's'), TMUX_TMPDIR: home };
  const sh = spawn('sh', ['-c', `${line} --listen 127.0.0.1:${port} --no-local`], { cwd: REPO, env, stdio: 'ignore' });
  try {
    await when('the hub answers', async () => ((await up(port)) ? true : undefined), 30_000);
    sh.kill('SIGTERM');
    await when('the hub is gone after SIGTERM', async () => ((await up(port)) ? undefined : true), 10_000);
  } finally {
    sh.kill('SIGKILL');
    // A hub orphaned by the old script line: end it by the port it holds, so the test leaks nothing.
    if (await up(port)) spawn('fuser', ['-k', '-TERM', `${port}/tcp`], { stdio: 'ignore' });
  }
}, 60_000);
