// deploy/nats/tma-account.conf as Debian's nats-server runs it: the node configs that include it
// load (`-t`, with their TLS pair and the hub passwords in the environment), a client with no
// user or a wrong password is refused at connect, and two hubs signing in as their own users
// (hub.toml [nats] user + password) serve one fleet through it: a row published to one shows on
// the other, so the account's permissions allow what a hub does.

import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { FakeCollector, protoRow, until } from '../support/hub-fake-collector.js';
import { TOKENS, startTestHub, testConfig, type TestHub } from '../support/hub-harness.js';
import { startNats, TEST_FLEET_KEY, type NatsNode } from '../support/nats-server.js';

const DEPLOY = join(import.meta.dirname, '../../deploy/nats');
const PASSWORDS = { TMA_NATS_HUB_A_PASSWORD: 'a-'.repeat(16), TMA_NATS_HUB_B_PASSWORD: 'b-'.repeat(16), TMA_NATS_HUB_C_PASSWORD: 'c-'.repeat(16) };
const dir = mkdtempSync(join(tmpdir(), 'tma-deploy-auth-'));
let nats: NatsNode;
const hubs: TestHub[] = [];
const collectors: FakeCollector[] = [];

beforeAll(async () => {
  // nats-server reads an include relative to the including file, even an absolute-looking one.
  nats = await startNats({ extra: (at) => [`include "${relative(at, join(DEPLOY, 'tma-account.conf'))}"`], env: PASSWORDS });
});
afterAll(async () => {
  for (const c of collectors) c.ws.terminate();
  for (const h of hubs) await h.close();
  nats?.stop();
  rmSync(dir, { recursive: true, force: true });
});

it('every node config of deploy/nats loads with its TLS pair and the passwords given', () => {
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-subj',
      '/CN=nats',
      '-days',
      '1',
      '-keyout',
      join(dir, 'k'),
      '-out',
      join(dir, 'c'),
    ],
    {
      stdio: 'ignore',
      timeout: 30_000,
    },
  );
  for (const n of ['a', 'b', 'c']) {
    const conf = join(dir, `nats-${n}.conf`);
    const text = readFileSync(join(DEPLOY, `nats-${n}.conf`), 'utf8')
      // The node's pair serves clients and routes; the CA (here the pair itself) checks routes.
      .replaceAll(`/etc/nats/tls/nats-${n}.crt`, join(dir, 'c'))
      .replaceAll(`/etc/nats/tls/nats-${n}.key`, join(dir, 'k'))
      .replace('/etc/nats/tls/ca.crt', join(dir, 'c'))
      .replace('include ./tma-account.conf', `include "${relative(dir, join(DEPLOY, 'tma-account.conf'))}"`);
    expect(text).toContain('tma-account.conf');
    writeFileSync(conf, text);
    const r = spawnSync('nats-server', ['--config', conf, '-t'], { encoding: 'utf8', timeout: 10_000, env: { ...process.env, ...PASSWORDS } });
    expect(r.status, `nats-${n}: ${r.stderr}${r.stdout}`).toBe(0);
    // Without the passwords in its environment the node does not start at all.
    const bare = spawnSync('nats-server', ['--config', conf, '-t'], { encoding: 'utf8', timeout: 10_000 });
    expect(bare.status).not.toBe(0);
  }
});

it('refuses a client with no user, or a wrong password', async () => {
  await expect(connect({ servers: nats.url, reconnect: false })).rejects.toThrow(/Authorization Violation/i);
  await expect(connect({ servers: nats.url, user: 'hub-a', pass: 'wrong', reconnect: false })).rejects.toThrow(/Authorization Violation/i);
});

it('two hubs signed in as hub-a and hub-b serve one fleet', { timeout: 60_000 }, async () => {
  const hub = async (user: 'hub-a' | 'hub-b', password: string) => {
    const h = await startTestHub({
      config: testConfig({ nats: { servers: [nats.url], replicas: 1, leaseMs: 1500, fleetKey: TEST_FLEET_KEY, user: { name: user, password } } }),
    });
    hubs.push(h);
    return h;
  };
  const a = await hub('hub-a', PASSWORDS.TMA_NATS_HUB_A_PASSWORD);
  const b = await hub('hub-b', PASSWORDS.TMA_NATS_HUB_B_PASSWORD);
  const c = await FakeCollector.connect(a.url, TOKENS.build1);
  collectors.push(c);
  c.hello('build1');
  await c.next((f) => f.type === 'welcome' || f.type === 'error');
  c.snapshot(1, [protoRow({ pane: '%1', state: 'blocked', host: 'build1', pending_summary: 'Run make test?' })]);
  const seen = await until(async () => {
    const rows = ((await (await b.get('/v1/agents')).json()) as { agents: { host: string; state: string; pending_summary: string | null }[] }).agents;
    return rows[0]?.state === 'blocked' ? rows : undefined;
  });
  expect(seen.map((r) => [r.host, r.state, r.pending_summary])).toEqual([['build1', 'blocked', 'Run make test?']]);
});
