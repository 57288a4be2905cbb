// `tma hub pair` against a real zero-config hub: the printed link carries a viewer token the hub
// takes without a restart (reads answer, acting is 403), the QR code printed beside it decodes to
// the same link, `tma hub clients` shows when the device was last seen, and `tma hub revoke` ends
// the stream that device has open. A token paired with --ttl is refused once it expires, and its
// open stream ends too.

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterEach, expect, it } from 'vitest';
import { launchPageBrowser } from '../support/page-browser.js';
import { killChildren } from '../support/children.js';
import { freePort } from '../support/ports.js';
import { REPO, tma, waitFor } from '../support/scratch-tmux.js';
import { decodeTerminalQr } from '../support/terminal-qr.js';

let dir = '';
let browser: Browser | null = null;
const children: ChildProcess[] = [];
const aborts: AbortController[] = [];

afterEach(async () => {
  await browser?.close();
  browser = null;
  for (const a of aborts.splice(0)) a.abort();
  await killChildren(children);
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = '';
});

async function zeroConfigHub(env: NodeJS.ProcessEnv, port: number) {
  const child = spawn(process.execPath, [join(REPO, 'bin/tma.js'), 'hub', '--no-local', '--listen', `127.0.0.1:${port}`], {
    env: { ...process.env, TMUX: '', TMUX_PANE: '', TMA_LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  await waitFor(() => /fleet view: \S+/.test(out), `the hub's page link: ${out.slice(-500)}`, 30_000);
  return { child, out: () => out };
}

const get = (port: number, token: string) => fetch(`http://127.0.0.1:${port}/v1/agents`, { headers: { authorization: `Bearer ${token}` } });

/** An SSE stream held open like the page's; resolves `ended` with the time it closed. */
async function openStream(port: number, token: string): Promise<{ first: string; ended: Promise<number> }> {
  const ctl = new AbortController();
  aborts.push(ctl);
  const res = await fetch(`http://127.0.0.1:${port}/v1/subscribe`, {
    headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' },
    signal: ctl.signal,
  });
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  const first = new TextDecoder().decode((await reader.read()).value);
  const ended = (async () => {
    try {
      while (!(await reader.read()).done);
    } catch {
      // aborted by the test's cleanup
    }
    return Date.now();
  })();
  return { first, ended };
}

function pairedLink(stdout: string): { link: string; token: string; qr: string } {
  const link = /^(http\S+#token=([0-9a-f]{64}))$/m.exec(stdout);
  expect(link, stdout).not.toBeNull();
  const qr = stdout
    .split('\n')
    .filter((l) => l.includes('\x1b['))
    .join('\n');
  return { link: link![1]!, token: link![2]!, qr };
}

it('pair --role viewer: link and QR agree, reads work, act is 403, clients shows it, revoke ends its stream', { timeout: 90_000 }, async () => {
  dir = mkdtempSync(join(tmpdir(), 'tma-hub-pair-'));
  const env = { XDG_CONFIG_HOME: join(dir, 'cfg'), XDG_STATE_HOME: join(dir, 'state') };
  const port = await freePort();
  const hub = await zeroConfigHub(env, port);

  const paired = await tma(['hub', 'pair', '--role', 'viewer', '--name', 'phone'], { env });
  expect(paired.code).toBe(0);
  // Loopback: the link works here, and the command says a phone could not reach it.
  expect(paired.stderr).toBe(
    `tma: warning: the hub listens on 127.0.0.1:${port}, loopback only: a phone cannot open this link; set public_url in hub.toml, or start the hub with --listen 0.0.0.0:${port}\n`,
  );
  const { link, token, qr } = pairedLink(paired.stdout);
  expect(link).toBe(`http://127.0.0.1:${port}/#token=${token}`);
  expect(decodeTerminalQr(qr)).toBe(link);
  expect(readFileSync(join(dir, 'cfg', 'tma', 'tokens', 'phone'), 'utf8').trim()).toBe(token);

  await waitFor(() => hub.out().includes('reload: +1 client'), `the reload: ${hub.out().slice(-600)}`, 10_000);
  expect((await get(port, token)).status).toBe(200);
  const act = await fetch(`http://127.0.0.1:${port}/v1/act`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ host: 'h1', pane: '%1', action: 'approve' }),
  });
  expect(act.status).toBe(403);

  // The page's stream, opened with the paired token; the hub records the device as seen.
  const before = Date.now();
  const stream = await openStream(port, token);
  expect(stream.first).toContain('data:');
  let clients: { name: string; role: string; last_seen_ms: number | null; expires_ms: number | null }[] = [];
  await waitFor(
    () => {
      const f = join(dir, 'state', 'tma', 'hub-clients.json');
      return existsSync(f) && ((JSON.parse(readFileSync(f, 'utf8')) as { clients: Record<string, number> }).clients.phone ?? 0) >= before;
    },
    'the last-seen file',
    15_000,
  );
  const listed = await tma(['hub', 'clients', '--json'], { env });
  expect(listed.code).toBe(0);
  clients = (JSON.parse(listed.stdout) as { schema: number; clients: typeof clients }).clients;
  expect(clients.map((c) => [c.name, c.role, c.expires_ms])).toEqual([
    ['local', 'operator', null],
    ['phone', 'viewer', null],
  ]);
  const phone = clients.find((c) => c.name === 'phone')!;
  expect(phone.last_seen_ms).toBeGreaterThanOrEqual(before);
  expect(phone.last_seen_ms).toBeLessThanOrEqual(Date.now());
  const table = await tma(['hub', 'clients'], { env });
  expect(table.stdout).toMatch(/^phone\s+viewer\s+\d+ s ago\s+-$/m);

  // The link as printed, in a real browser: the page signs in as the paired viewer.
  browser = await launchPageBrowser(join(dir, 'browser'));
  const page = await (await browser.newContext()).newPage();
  await page.goto(link);
  await expect.poll(() => page.locator('#who').textContent(), { timeout: 10_000 }).toBe('phone · viewer');
  expect(await page.locator('button.act').count()).toBe(0);

  // Revoke: the entry leaves hub.toml, the token file goes, and the open stream ends promptly.
  const t0 = Date.now();
  const revoked = await tma(['hub', 'revoke', 'phone'], { env });
  expect(revoked.code).toBe(0);
  expect(revoked.stdout).toContain('client phone removed from');
  const t1 = Date.now();
  const endedAt = await Promise.race([stream.ended, new Promise<number>((r) => setTimeout(() => r(-1), 10_000))]);
  expect(endedAt).toBeGreaterThan(0);
  console.log(`hub-pair: tma hub revoke started to the device's stream closed: ${endedAt - t0} ms (${endedAt - t1} ms after it returned)`);
  expect((await get(port, token)).status).toBe(401);
  // The page's own stream ended too: it falls back to asking for a token.
  await expect.poll(() => page.locator('#login').isVisible(), { timeout: 15_000 }).toBe(true);
  expect(readFileSync(join(dir, 'cfg', 'tma', 'hub.toml'), 'utf8')).not.toContain('phone');
  expect(existsSync(join(dir, 'cfg', 'tma', 'tokens', 'phone'))).toBe(false);
  // The hub printed at start still opens the fleet with its own link.
  const local = /#token=([0-9a-f]+)/.exec(hub.out())![1]!;
  expect((await get(port, local)).status).toBe(200);
  expect(hub.out().match(/listening on/g)).toHaveLength(1);
});

it('pair --ttl: the token works until its expiry, then is refused and its stream ends', { timeout: 60_000 }, async () => {
  dir = mkdtempSync(join(tmpdir(), 'tma-hub-pair-'));
  const env = { XDG_CONFIG_HOME: join(dir, 'cfg'), XDG_STATE_HOME: join(dir, 'state') };
  const port = await freePort();
  const hub = await zeroConfigHub(env, port);
  const paired = await tma(['hub', 'pair', '--name', 'tablet', '--ttl', '4s'], { env });
  expect(paired.code).toBe(0);
  const { token } = pairedLink(paired.stdout);
  const expires = /^expires = (\S+)$/m.exec(readFileSync(join(dir, 'cfg', 'tma', 'hub.toml'), 'utf8'))![1]!;
  const expiresMs = Date.parse(expires);
  expect(expiresMs - Date.now()).toBeGreaterThan(1000);
  expect(expiresMs - Date.now()).toBeLessThanOrEqual(5000);
  await waitFor(() => hub.out().includes('reload: +1 client'), 'the reload', 10_000);
  expect((await get(port, token)).status).toBe(200);
  const stream = await openStream(port, token);
  const endedAt = await Promise.race([stream.ended, new Promise<number>((r) => setTimeout(() => r(-1), 12_000))]);
  expect(endedAt).toBeGreaterThanOrEqual(expiresMs);
  expect(endedAt - expiresMs).toBeLessThan(3000);
  const after = await get(port, token);
  expect(after.status).toBe(401);
  expect(((await after.json()) as { error: string }).error).toBe('this token has expired');
  const listed = await tma(['hub', 'clients'], { env });
  expect(listed.stdout).toMatch(/^tablet\s+viewer\s+\S.*\s+expired$/m);
});
