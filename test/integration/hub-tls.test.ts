// A hub with `[tls]`, from `tma hub tls` to a collector publishing over wss://: the certificate the
// hub presents is the one minted (same SHA-256 as printed), real curl refuses it without the CA and
// takes it with --cacert, the collector command `tma hub token` prints (with --hub-ca) links and
// publishes, a collector without the CA is refused in one line naming the certificate problem, the
// fleet CLI trusts the hub by CA or by fingerprint, and a renewed certificate is served after a
// SIGHUP without a restart or a dropped link.

import { spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { afterEach, expect, it } from 'vitest';
import { loadHubConfig } from '../../hub/config/config.js';
import type { FleetDocument } from '../../shared/fleet.js';
import { killChildren, launchLogged } from '../support/children.js';
import { freePort } from '../support/ports.js';
import { REPO, ScratchTmux, tma, waitFor } from '../support/scratch-tmux.js';

const SCREENS = join(REPO, 'test/integration/screens');

let dir = '';
let scratch: ScratchTmux | null = null;
const children: ChildProcess[] = [];

afterEach(async () => {
  await killChildren(children);
  scratch?.kill();
  scratch = null;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = '';
});

const launch = (args: string[], env: NodeJS.ProcessEnv) => launchLogged(children, process.execPath, [join(REPO, 'bin/tma.js'), ...args], env);

/** The SHA-256 of the certificate the hub presents, trusting only `ca`. */
function presented(port: number, ca: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port, ca }, () => {
      const fp = s.getPeerX509Certificate()!.fingerprint256;
      s.destroy();
      resolve(fp);
    });
    s.once('error', reject);
  });
}

const fingerprintOf = (stdout: string) => /^# SHA-256 fingerprint: ([0-9A-F:]{95})$/m.exec(stdout)?.[1];

it('[tls]: the minted certificate is served, trusted by --hub-ca or a pin, refused without, renewed on SIGHUP', { timeout: 120_000 }, async () => {
  dir = mkdtempSync(join(tmpdir(), 'tma-hub-tls-'));
  const env = { XDG_CONFIG_HOME: join(dir, 'cfg'), XDG_STATE_HOME: join(dir, 'state') };
  const cfgDir = join(dir, 'cfg', 'tma');
  const cert = join(cfgDir, 'tls', 'hub.crt');

  const minted = await tma(['hub', 'tls', '--name', 'localhost,127.0.0.1'], { env });
  expect(minted.stderr).toBe('');
  expect(minted.code).toBe(0);
  const fp = fingerprintOf(minted.stdout)!;
  expect(fp).toBeDefined();
  expect(minted.stdout).toContain(`[tls]\ncert_file = "${cert}"\nkey_file = "${join(cfgDir, 'tls', 'hub.key')}"\n`);
  expect((await import('node:fs')).statSync(join(cfgDir, 'tls', 'hub.key')).mode & 0o777).toBe(0o600);
  expect(loadHubConfig(join(cfgDir, 'hub.toml')).tls?.certFile).toBe(cert);

  const port = await freePort();
  const hub = launch(['hub', '--no-local', '--listen', `127.0.0.1:${port}`], env);
  await waitFor(() => /fleet view: \S+/.test(hub.out()), `the hub's page link: ${hub.out().slice(-500)}`, 30_000);
  const link = /fleet view: (\S+)/.exec(hub.out())![1]!;
  expect(link).toMatch(new RegExp(`^https://127\\.0\\.0\\.1:${port}/#token=[0-9a-f]+$`));
  const local = /#token=([0-9a-f]+)$/.exec(link)![1]!;
  // No warning about tokens in clear: this hub speaks TLS (and listens on loopback anyway).
  expect(hub.out()).not.toContain('tokens travel in clear');

  // The hub presents the certificate just minted.
  const ca = readFileSync(cert, 'utf8');
  expect(await presented(port, ca)).toBe(fp);

  // Real curl: refused without the CA (60: the peer certificate cannot be verified), fine with it.
  const url = `https://127.0.0.1:${port}/v1/agents`;
  const bare = spawnSync('curl', ['-sS', '--max-time', '10', '-H', `Authorization: Bearer ${local}`, url], { encoding: 'utf8' });
  expect(bare.status).toBe(60);
  expect(bare.stderr).toContain('self-signed certificate');
  const withCa = spawnSync('curl', ['-sS', '--max-time', '10', '--cacert', cert, '-H', `Authorization: Bearer ${local}`, url], { encoding: 'utf8' });
  expect(withCa.status).toBe(0);
  expect(JSON.parse(withCa.stdout)).toMatchObject({ schema: 1, agents: [] });

  // The collector command, as `tma hub token` prints it for this hub: wss:// and --hub-ca.
  const t0 = Date.now();
  const token = await tma(['hub', 'token', '--host', 'build2'], { env });
  expect(token.code).toBe(0);
  const command = /^#\s+(tma collector .+)$/m.exec(token.stdout)?.[1];
  const tokenFile = join(cfgDir, 'tokens', 'build2');
  expect(command).toBe(`tma collector --hub wss://127.0.0.1:${port} --hub-ca ${cert} --token-file ${tokenFile} --host-name build2`);
  await waitFor(() => hub.out().includes('reload: +1 host token'), `the reload: ${hub.out().slice(-800)}`, 10_000);

  // Without the CA the collector is refused, in one line that names the problem and the fix.
  const untrusting = launch(
    ['collector', '--hub', `wss://127.0.0.1:${port}`, '--token-file', tokenFile, '--host-name', 'build2', '--socket-name', 'tma-no-such-server-tls'],
    { XDG_RUNTIME_DIR: join(dir, 'run-u'), XDG_CONFIG_HOME: join(dir, 'cfg-u'), XDG_STATE_HOME: join(dir, 'st-u') },
  );
  await waitFor(() => untrusting.out().includes('cannot trust the hub'), `the refusal: ${untrusting.out().slice(-800)}`, 15_000);
  const refusal = untrusting
    .out()
    .split('\n')
    .filter((l) => l.includes('cannot trust the hub'));
  expect(refusal).toHaveLength(1);
  expect(refusal[0]).toContain(`cannot trust the hub at wss://127.0.0.1:${port}/v1/collect: self-signed certificate; pass --hub-ca FILE`);
  untrusting.child.kill('SIGTERM');

  // With it, as printed, on another tmux server: build2's rows at /v1/agents.
  scratch = new ScratchTmux('tls');
  const pane = scratch.start();
  await scratch.standIn(pane, 'claude', join(SCREENS, 'claude-idle-marked.txt'));
  const tLaunch = Date.now();
  const collector = launch([...command!.split(' ').slice(1), '--socket-name', scratch.name, '--interval', '1'], {
    XDG_RUNTIME_DIR: join(dir, 'run-b2'),
    XDG_CONFIG_HOME: join(dir, 'cfg-b2'),
    XDG_STATE_HOME: join(dir, 'st-b2'),
  });
  const rowsByCli = async (trust: string[]) => {
    const r = await tma(['--hub', `https://127.0.0.1:${port}`, ...trust, 'ls', '--json'], { env });
    return { ...r, rows: r.code === 0 ? (JSON.parse(r.stdout) as FleetDocument).agents.filter((a) => a.host === 'build2') : [] };
  };
  let rows: FleetDocument['agents'] = [];
  while (Date.now() < tLaunch + 10_000 && !rows.length) {
    rows = (await rowsByCli(['--hub-ca', cert])).rows;
    if (!rows.length) await new Promise((r) => setTimeout(r, 250));
  }
  expect(rows.map((r) => [r.host, r.pane, r.agent])).toEqual([['build2', pane, 'claude']]);
  const took = Date.now() - tLaunch;
  expect(took).toBeLessThan(10_000);
  console.log(
    `hub-tls: collector started with --hub-ca to build2's row over wss:// in ${took} ms (${Date.now() - t0} ms from the token, with the refused collector between)`,
  );

  // The fleet CLI: by pinned fingerprint too; and without either, one line naming the problem.
  expect((await rowsByCli(['--hub-fingerprint', fp.replace(/:/g, '').toLowerCase()])).rows).toHaveLength(1);
  const refused = await rowsByCli([]);
  expect(refused.code).toBe(1);
  expect(refused.stderr).toBe(
    `tma: hub https://127.0.0.1:${port} not trusted: self-signed certificate; pass --hub-ca FILE (the hub's certificate, e.g. from tma hub tls) or --hub-fingerprint SHA256\n`,
  );
  const wrongPin = await rowsByCli(['--hub-fingerprint', 'AB'.repeat(32)]);
  expect(wrongPin.code).toBe(1);
  expect(wrongPin.stderr).toContain(`the hub's certificate has SHA-256 ${fp}, not the pinned`);

  // Renewal: a new pair over the same files, the hub told to reload, new handshakes get it.
  const renewed = await tma(['hub', 'tls', '--name', 'localhost,127.0.0.1', '--force'], { env });
  expect(renewed.code).toBe(0);
  expect(renewed.stdout).toContain('was told to reload: new connections get this certificate');
  const fp2 = fingerprintOf(renewed.stdout)!;
  expect(fp2).not.toBe(fp);
  await waitFor(() => hub.out().includes('reload: tls changed'), `the renewal reload: ${hub.out().slice(-800)}`, 10_000);
  expect(await presented(port, readFileSync(cert, 'utf8'))).toBe(fp2);
  // No restart, and the collector's link (made before the renewal) is still up.
  expect(hub.out().match(/listening on/g)).toHaveLength(1);
  expect(collector.out()).not.toContain('hub link down');
  expect((await rowsByCli(['--hub-ca', cert])).rows).toHaveLength(1);
});

it('a plain-HTTP hub beyond loopback warns once that tokens travel in clear', { timeout: 60_000 }, async () => {
  dir = mkdtempSync(join(tmpdir(), 'tma-hub-tls-'));
  const env = { XDG_CONFIG_HOME: join(dir, 'cfg'), XDG_STATE_HOME: join(dir, 'state') };
  const port = await freePort();
  const hub = launch(['hub', '--no-local', '--listen', `0.0.0.0:${port}`], env);
  await waitFor(() => /fleet view: \S+/.test(hub.out()), `the hub's page link: ${hub.out().slice(-500)}`, 30_000);
  expect(hub.out().match(/tokens travel in clear/g)).toHaveLength(1);
  expect(hub.out()).toContain('add [tls] to hub.toml (tma hub tls --name HOST)');
});
