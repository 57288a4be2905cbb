// The main job as a person runs it: `tma hub` with no configuration at all, following one scratch
// tmux server through its embedded collector, read with curl-like requests and with
// `tma --hub URL ls`, then stopped with SIGTERM. The CLI must be built first.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import type { FleetDocument } from '../../shared/fleet.js';
import { REPO, ScratchTmux, tma, waitFor } from '../support/scratch-tmux.js';
import { SCREENS } from '../support/screens.js';
import { freePort } from '../support/ports.js';

let scratch: ScratchTmux | null = null;
let hub: ChildProcess | null = null;
let exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }> | null = null;
let dir = '';

afterEach(async () => {
  if (hub && hub.exitCode === null && hub.signalCode === null) hub.kill('SIGKILL');
  await exited;
  hub = null;
  exited = null;
  scratch?.kill();
  scratch = null;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = '';
});

it('zero-config `tma hub -L <scratch>` serves the scratch agent with the token it wrote, and stops cleanly on SIGTERM', async () => {
  scratch = new ScratchTmux('hubjob');
  const pane = scratch.start();
  await scratch.standIn(pane, 'claude', SCREENS.claudeIdle);
  dir = mkdtempSync(join(tmpdir(), 'tma-main-job-'));
  const env = { ...process.env, TMUX: '', TMUX_PANE: '', TMA_HUB: '', TMA_HUB_TOKEN: '', XDG_CONFIG_HOME: join(dir, 'cfg'), XDG_RUNTIME_DIR: join(dir, 'run') };
  const port = await freePort();

  const child = spawn(process.execPath, [join(REPO, 'bin/tma.js'), 'hub', '--listen', `127.0.0.1:${port}`, '-L', scratch.name], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  hub = child;
  exited = new Promise((r) => child.once('exit', (code, signal) => r({ code, signal })));
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));

  await waitFor(() => /listening on http:\/\/\S+/.test(out), 'the hub printing its URL', 15_000).catch((e: unknown) => {
    throw new Error(`${(e as Error).message}\nstdout: ${out}\nstderr: ${err}`);
  });
  const url = out.match(/listening on (http:\/\/\S+)/)![1]!;
  expect(url).toBe(`http://127.0.0.1:${port}`);

  // Zero-config wrote one token, readable by this user only, and told where it is.
  const tokenFile = join(dir, 'cfg', 'tma', 'hub.token');
  const token = readFileSync(tokenFile, 'utf8').trim();
  expect(token).toMatch(/^[0-9a-f]{32,}$/);
  expect(statSync(tokenFile).mode & 0o777).toBe(0o600);
  expect(out).toContain(tokenFile);

  // The printed URL's /v1/agents, with that token, lists the scratch server's stand-in.
  const agents = async (bearer: string | null) => fetch(`${url}/v1/agents`, { headers: bearer === null ? {} : { authorization: `Bearer ${bearer}` } });
  let doc: FleetDocument | null = null;
  for (const deadline = Date.now() + 15_000; ;) {
    const res = await agents(token);
    doc = res.ok ? ((await res.json()) as FleetDocument) : null;
    if (doc?.agents.some((r) => r.pane === pane && r.state === 'idle')) break;
    if (Date.now() > deadline) throw new Error(`the stand-in was never listed: ${res.status} ${JSON.stringify(doc)}\n${err}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  const row = doc.agents.find((r) => r.pane === pane)!;
  expect(row).toMatchObject({ agent: 'claude', state: 'idle', stale: false, server: expect.stringMatching(new RegExp(`/${scratch.name}$`)) });
  expect(row).not.toHaveProperty('title');
  // Only the scratch server is followed (-L), so every row is from it.
  expect(doc.agents.every((r) => r.server.endsWith(`/${scratch!.name}`))).toBe(true);
  expect(doc.hosts).toHaveLength(1);
  expect(doc.hosts[0]).toMatchObject({ host: row.host, transport: 'local', reachable: true, stale: false });
  expect((await agents(null)).status).toBe(401);
  expect((await agents(`${token}x`)).status).toBe(401);

  // `tma --hub URL ls` finds the token file by itself (same XDG_CONFIG_HOME) and shows the agent.
  const ls = await tma(['--hub', url, 'ls'], { env });
  expect(ls.stderr).toBe('');
  expect(ls.code).toBe(0);
  const line = ls.stdout.split('\n').find((l) => l.includes(pane));
  expect(line).toBeDefined();
  expect(line).toContain('claude');
  expect(line).toContain('idle');
  expect(line).toContain(row.host);
  // Without that token file the same call is refused.
  const refused = await tma(['--hub', url, 'ls'], { env: { ...env, XDG_CONFIG_HOME: join(dir, 'elsewhere') } });
  expect(refused.code).toBe(1);

  child.kill('SIGTERM');
  const end = await Promise.race([exited, new Promise<'hung'>((r) => setTimeout(() => r('hung'), 10_000))]);
  expect(end).toEqual({ code: 0, signal: null });
  await expect(fetch(`${url}/healthz`)).rejects.toThrow();
}, 60_000);
