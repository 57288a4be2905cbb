// `tma --hub https://… watch` over a real hub serving its own certificate (`tma hub tls`), with a
// collector on wss:// and a stand-in agent blocked on a dialog: the view's approve must dial the
// hub with the same trust as its list (--hub-ca, TMA_HUB_CA, --hub-fingerprint) and send one key.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { killChildren } from '../support/children.js';
import { freePort } from '../support/ports.js';
import { REPO, ScratchTmux, tma, waitFor } from '../support/scratch-tmux.js';
import { tmaLine, tuiPane } from '../support/tui-pane.js';

let dir = '';
const servers: ScratchTmux[] = [];
const children: ChildProcess[] = [];

afterEach(async () => {
  await killChildren(children);
  for (const s of servers.splice(0)) s.kill();
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = '';
});

function launch(args: string[], env: NodeJS.ProcessEnv): () => string {
  const child = spawn(process.execPath, [join(REPO, 'bin/tma.js'), ...args], {
    env: { ...process.env, TMUX: '', TMUX_PANE: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  return () => out;
}

const VARIANTS = [
  { name: '--hub-ca', trust: (cert: string) => ({ flags: ['--hub-ca', cert], env: {} }) },
  { name: 'TMA_HUB_CA', trust: (cert: string) => ({ flags: [], env: { TMA_HUB_CA: cert } }) },
  { name: '--hub-fingerprint', trust: (_c: string, fp: string) => ({ flags: ['--hub-fingerprint', fp], env: {} }) },
] as const;

test.each(VARIANTS)('watch over TLS with $name: a then y sends exactly one key', { timeout: 90_000 }, async (v) => {
  dir = mkdtempSync(join(tmpdir(), 'tma-watch-tls-'));
  const cfg = { XDG_CONFIG_HOME: join(dir, 'cfg'), XDG_STATE_HOME: join(dir, 'state') };
  const minted = await tma(['hub', 'tls', '--name', 'localhost,127.0.0.1'], { env: cfg });
  expect(minted.code, minted.stderr).toBe(0);
  const fp = /^# SHA-256 fingerprint: ([0-9A-F:]{95})$/m.exec(minted.stdout)![1]!;
  const tlsDir = join(dir, 'cfg', 'tma', 'tls');
  const cert = join(tlsDir, 'hub.crt');
  for (const n of ['laptop', 'operator']) writeFileSync(join(dir, n), `tok-${n}-${Math.random().toString(36).slice(2)}\n`);
  const port = await freePort();
  writeFileSync(
    join(dir, 'hub.toml'),
    `listen = "127.0.0.1:${port}"\n[[collector]]\nhost = "laptop"\ntoken_file = "${join(dir, 'laptop')}"\n` +
      `[[client]]\nname = "olga"\ntoken_file = "${join(dir, 'operator')}"\nrole = "operator"\n` +
      `[tls]\ncert_file = "${cert}"\nkey_file = "${join(tlsDir, 'hub.key')}"\n`,
  );
  const hubOut = launch(['hub', '--no-local', '--config', join(dir, 'hub.toml')], {
    XDG_STATE_HOME: join(dir, 'hub-state'),
    XDG_CONFIG_HOME: join(dir, 'hub-cfg'),
  });
  await waitFor(() => /listening on/.test(hubOut()), `the hub up: ${hubOut().slice(-500)}`, 30_000);

  const agents = new ScratchTmux('tlsagent');
  servers.push(agents);
  const far = await agents.standIn(agents.start(), 'claude', 'claude-permission-dialog.txt');
  const cdirs = { XDG_STATE_HOME: join(dir, 'c-state'), XDG_RUNTIME_DIR: join(dir, 'c-run'), XDG_CONFIG_HOME: join(dir, 'c-cfg') };
  for (const d of Object.values(cdirs)) mkdirSync(d, { recursive: true });
  const collectorOut = launch(
    [
      'collector',
      '--hub',
      `wss://127.0.0.1:${port}`,
      '--hub-ca',
      cert,
      '--token-file',
      join(dir, 'laptop'),
      '--host-name',
      'laptop',
      '--socket-name',
      agents.name,
      '--interval',
      '0.3',
    ],
    { ...cdirs, TMA_COLLECTOR_HEARTBEAT_MS: '1000' },
  );

  const viewer = new ScratchTmux('tlsviewer');
  servers.push(viewer);
  viewer.start();
  const t = tuiPane(viewer, 150, 30);
  mkdirSync(join(dir, 'cli-cfg'), { recursive: true });
  const trust = v.trust(cert, fp);
  t.type(
    tmaLine({ XDG_CONFIG_HOME: join(dir, 'cli-cfg'), ...trust.env }, [
      '--hub',
      `https://127.0.0.1:${port}`,
      '--token-file',
      join(dir, 'operator'),
      ...trust.flags,
      'watch',
      '--table',
    ]),
  );
  t.keys('Enter');
  await t
    .until((x) => /⚑ blocked .* laptop +main:0\.0/.test(x), 'the blocked row over TLS', 20_000)
    .catch((e: unknown) => {
      throw new Error(`${(e as Error).message}\ncollector:\n${collectorOut()}\nhub:\n${hubOut()}`);
    });
  t.keys('a');
  await t.until((x) => x.includes('Approve claude on laptop main:0.0') && x.includes('[y/N]'), 'the confirmation');
  expect(far.keys()).toBe('');
  t.keys('y');
  const after = await t.until((x) => x.includes('[sent]') || x.includes('[error'), 'the outcome on the row', 20_000);
  expect(after).not.toContain('not trusted');
  expect(after).toContain('[sent]');
  await new Promise((r) => setTimeout(r, 500));
  expect(far.keys()).toBe('1');
});
