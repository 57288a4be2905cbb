// TLS without the friction: once a hub serves HTTPS, `tma hub tls` prints commands at the address
// the running hub really listens on (not the default port), `tma hub tls --show` prints the kept
// certificate's fingerprint again, and a collector still dialling ws:// (or the CLI given http://)
// is told in one line that the hub wants wss:// and a CA or a pin, instead of retrying on
// "socket hang up" with no hint.

import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { killChildren, launchLogged } from '../support/children.js';
import { freePort } from '../support/ports.js';
import { REPO, tma, waitFor } from '../support/scratch-tmux.js';

let dir = '';
const children: ChildProcess[] = [];

afterEach(async () => {
  await killChildren(children);
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = '';
});

const launch = (args: string[], env: NodeJS.ProcessEnv) => launchLogged(children, process.execPath, [join(REPO, 'bin/tma.js'), ...args], env);

const fingerprintOf = (stdout: string) => /^# SHA-256 fingerprint: ([0-9A-F:]{95})$/m.exec(stdout)?.[1];

it('hub tls prints the running hub address, --show keeps the fingerprint, a ws:// collector is told to use wss://', { timeout: 90_000 }, async () => {
  dir = mkdtempSync(join(tmpdir(), 'tma-tls-friction-'));
  const env = { XDG_CONFIG_HOME: join(dir, 'cfg'), XDG_STATE_HOME: join(dir, 'state') };
  const cert = join(dir, 'cfg', 'tma', 'tls', 'hub.crt');

  const none = await tma(['hub', 'tls', '--show'], { env });
  expect(none.code).toBe(1);
  expect(none.stderr).toBe(`tma: no certificate at ${cert}; \`tma hub tls\` mints one\n`);

  const minted = await tma(['hub', 'tls', '--name', 'localhost,127.0.0.1'], { env });
  expect(minted.code).toBe(0);
  const fp = fingerprintOf(minted.stdout)!;
  expect(fp).toBeDefined();

  // A hub on a port hub.toml does not name (--listen): the commands printed from now on name it.
  const port = await freePort();
  const hub = launch(['hub', '--no-local', '--listen', `127.0.0.1:${port}`], env);
  await waitFor(() => /fleet view: \S+/.test(hub.out()), `the hub's page link: ${hub.out().slice(-500)}`, 30_000);

  const shown = await tma(['hub', 'tls', '--show'], { env });
  expect(shown.stderr).toBe('');
  expect(shown.code).toBe(0);
  expect(fingerprintOf(shown.stdout)).toBe(fp);
  expect(shown.stdout).toContain(`# certificate ${cert} for localhost, 127.0.0.1, valid until `);
  expect(shown.stdout).toContain(`#   tma collector --hub wss://127.0.0.1:${port} --hub-ca ${cert} --token-file FILE\n`);
  expect(shown.stdout).toContain(`#   tma --hub https://127.0.0.1:${port} --hub-fingerprint ${fp} ls\n`);

  const renewed = await tma(['hub', 'tls', '--name', 'localhost,127.0.0.1', '--force'], { env });
  expect(renewed.code).toBe(0);
  expect(renewed.stdout).toContain(`#   tma collector --hub wss://127.0.0.1:${port} --hub-ca ${cert} --token-file FILE\n`);
  expect(renewed.stdout).not.toContain(':7480');
  const fp2 = fingerprintOf(renewed.stdout)!;
  expect(fingerprintOf((await tma(['hub', 'tls', '--show'], { env })).stdout)).toBe(fp2);

  const stray = await tma(['hub', 'tls', '--show', '--force'], { env });
  expect(stray.code).toBe(2);
  expect(stray.stderr).toContain('--show mints nothing');

  // A phone paired now is told how to trust the self-signed certificate, by its fingerprint.
  const paired = await tma(['hub', 'pair', '--name', 'phone'], { env });
  expect(paired.code).toBe(0);
  expect(paired.stdout).toContain(`# the certificate is self-signed: the phone warns once; accept it only if it shows SHA-256\n#   ${fp2}\n`);
  expect(paired.stdout).toContain(`# or install ${cert} on the phone as a trusted certificate`);

  // The fleet CLI given http:// (or ws://) for this hub: the same hint, exit 1.
  for (const scheme of ['http', 'ws']) {
    const cli = await tma(['--hub', `${scheme}://127.0.0.1:${port}`, 'ls'], { env });
    expect(cli.code).toBe(1);
    expect(cli.stderr).toBe(
      `tma: hub http://127.0.0.1:${port} serves TLS: use --hub https://127.0.0.1:${port} with --hub-ca FILE or --hub-fingerprint SHA256 (\`tma hub tls --show\` on the hub prints both)\n`,
    );
  }

  // A collector still on ws://: one line saying what to change, then quiet retries.
  const token = await tma(['hub', 'token', '--host', 'old1'], { env });
  expect(token.code).toBe(0);
  const plain = launch(
    [
      'collector',
      '--hub',
      `ws://127.0.0.1:${port}`,
      '--token-file',
      join(dir, 'cfg', 'tma', 'tokens', 'old1'),
      '--host-name',
      'old1',
      '--socket-name',
      'tma-no-such-server-friction',
    ],
    { XDG_RUNTIME_DIR: join(dir, 'run-o'), XDG_CONFIG_HOME: join(dir, 'cfg-o'), XDG_STATE_HOME: join(dir, 'st-o') },
  );
  await waitFor(() => plain.out().includes('serves TLS'), `the hint: ${plain.out().slice(-800)}`, 20_000);
  // A second attempt must not say it again (the refusal backoff waits at least its base first).
  await new Promise((r) => setTimeout(r, 1_500));
  const said = plain
    .out()
    .split('\n')
    .filter((l) => l.includes('serves TLS'));
  expect(said).toHaveLength(1);
  expect(said[0]).toContain(`the hub at ws://127.0.0.1:${port}/v1/collect serves TLS: dial wss://127.0.0.1:${port}/v1/collect with --hub-ca FILE`);
  expect(said[0]).toContain('--hub-fingerprint SHA256');
  expect(plain.out()).not.toContain('socket hang up');
});
