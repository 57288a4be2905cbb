// The cluster port of the shipped NATS nodes takes only routes that prove they belong, on real
// nats-servers (Debian's package) on loopback:
// - deploy/nats/nats-{a,b}.conf, as shipped but for ports and paths: the two nodes route to each
//   other over mutual TLS (certificates from one CA, made here), and a message crosses; a node
//   routing in without a certificate, or with one from another CA, is refused, and so is a
//   client with no user.
// - deploy/fleet-compose.yaml's node commands (with compose-node.conf): the nodes route with the
//   route password; a node routing in without it is refused.

import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killChildren } from '../support/children.js';
import { NATS_SERVER } from '../support/nats-server.js';
import { freePort } from '../support/ports.js';
import { until } from '../support/hub-fake-collector.js';

const DEPLOY = join(import.meta.dirname, '../../deploy');
const yaml = createRequire(import.meta.url)('js-yaml') as { load(text: string): unknown };
const PASSWORDS = { TMA_NATS_HUB_A_PASSWORD: 'a-'.repeat(16), TMA_NATS_HUB_B_PASSWORD: 'b-'.repeat(16), TMA_NATS_HUB_C_PASSWORD: 'c-'.repeat(16) };
const ROUTE_PASSWORD = 'r0ute-'.repeat(4);
/** How long a refused route has to get in: several of nats-server's 1 s route retries. */
const ROUTE_TRIES_MS = 4000;

const dir = mkdtempSync(join(tmpdir(), 'tma-deploy-routes-'));
const children: ChildProcess[] = [];
const conns: NatsConnection[] = [];

interface Node {
  port: number;
  clusterPort: number;
  monitor: number;
  log: string;
}

const ssl = (args: string[]) => execFileSync('openssl', args, { stdio: 'ignore', timeout: 30_000 });

/** A CA and a node certificate it signs (loopback names, both uses), and a self-signed stranger. */
function makeCerts(): void {
  const f = (n: string) => join(dir, n);
  ssl([
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-subj',
    '/CN=tma-nats-ca',
    '-days',
    '1',
    '-keyout',
    f('ca.key'),
    '-out',
    f('ca.crt'),
  ]);
  writeFileSync(f('node.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\n');
  ssl([
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-subj',
    '/CN=nats-node',
    '-keyout',
    f('node.key'),
    '-out',
    f('node.csr'),
  ]);
  ssl([
    'x509',
    '-req',
    '-in',
    f('node.csr'),
    '-CA',
    f('ca.crt'),
    '-CAkey',
    f('ca.key'),
    '-CAcreateserial',
    '-days',
    '1',
    '-extfile',
    f('node.ext'),
    '-out',
    f('node.crt'),
  ]);
  ssl([
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-subj',
    '/CN=stranger',
    '-days',
    '1',
    '-addext',
    'subjectAltName=IP:127.0.0.1',
    '-addext',
    'extendedKeyUsage=serverAuth,clientAuth',
    '-keyout',
    f('stranger.key'),
    '-out',
    f('stranger.crt'),
  ]);
}

async function plan(): Promise<Node> {
  return { port: await freePort(), clusterPort: await freePort(), monitor: await freePort(), log: '' };
}

function launch(n: Node, args: string[], env: NodeJS.ProcessEnv = {}): void {
  const child = spawn(NATS_SERVER, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  children.push(child);
  child.stdout.on('data', (d) => (n.log += String(d)));
  child.stderr.on('data', (d) => (n.log += String(d)));
}

/** How many routes a node has, from its monitoring port (null until it answers). */
async function routes(n: Node): Promise<number | null> {
  try {
    return ((await (await fetch(`http://127.0.0.1:${n.monitor}/routez`)).json()) as { num_routes: number }).num_routes;
  } catch {
    return null;
  }
}

/** deploy/nats/nats-<name>.conf, as shipped but for loopback ports, this test's files and `routeTo`. */
function shippedNode(name: 'a' | 'b', n: Node, routeTo: Node[]): string {
  const text = readFileSync(join(DEPLOY, `nats/nats-${name}.conf`), 'utf8')
    .replace('listen: 0.0.0.0:4222', `listen: 127.0.0.1:${n.port}`)
    .replace('listen: 0.0.0.0:6222', `listen: 127.0.0.1:${n.clusterPort}`)
    .replace('http: 127.0.0.1:8222', `http: 127.0.0.1:${n.monitor}`)
    .replace(`/var/lib/nats/nats-${name}`, join(dir, `js-${name}`))
    .replaceAll(`/etc/nats/tls/nats-${name}.crt`, join(dir, 'node.crt'))
    .replaceAll(`/etc/nats/tls/nats-${name}.key`, join(dir, 'node.key'))
    .replace('/etc/nats/tls/ca.crt', join(dir, 'ca.crt'))
    .replace(/routes: \[[^\]]*\]/, `routes: [${routeTo.map((r) => `nats-route://127.0.0.1:${r.clusterPort}`).join(', ')}]`)
    .replace('include ./tma-account.conf', `include "${relative(dir, join(DEPLOY, 'nats/tma-account.conf'))}"`);
  // Every line that named a machine's path or port was replaced.
  const settings = text.split('\n').filter((l) => !l.trimStart().startsWith('#'));
  expect(settings.join('\n')).not.toMatch(/\/etc\/nats|\/var\/lib|0\.0\.0\.0|\.lan:/);
  const file = join(dir, `nats-${name}.conf`);
  writeFileSync(file, text);
  return file;
}

/** A node of nobody's cluster, routing into `to`'s cluster port: `tls` with the stranger's certificate, or none. */
function intruder(n: Node, to: Node, tls: 'stranger' | 'none', name: string): void {
  const lines = [
    `server_name: ${name}`,
    `listen: 127.0.0.1:${n.port}`,
    `http: 127.0.0.1:${n.monitor}`,
    'cluster {',
    '  name: tma-fleet',
    `  listen: 127.0.0.1:${n.clusterPort}`,
    ...(tls === 'stranger'
      ? [`  tls { cert_file: "${join(dir, 'stranger.crt')}", key_file: "${join(dir, 'stranger.key')}", ca_file: "${join(dir, 'ca.crt')}", timeout: 2 }`]
      : []),
    `  routes: [nats-route://127.0.0.1:${to.clusterPort}]`,
    '}',
  ];
  const file = join(dir, `${name}.conf`);
  writeFileSync(file, lines.join('\n') + '\n');
  launch(n, ['-c', file]);
}

beforeAll(() => makeCerts(), 60_000);
afterAll(async () => {
  for (const nc of conns) await nc.close().catch(() => undefined);
  await killChildren(children);
  rmSync(dir, { recursive: true, force: true });
});

describe('deploy/nats node configs: routes by mutual TLS', { timeout: 60_000 }, () => {
  let a: Node;
  let b: Node;

  it('the two nodes route to each other and a message crosses', async () => {
    a = await plan();
    b = await plan();
    launch(a, ['-c', shippedNode('a', a, [a, b])], PASSWORDS);
    launch(b, ['-c', shippedNode('b', b, [a, b])], PASSWORDS);
    await until(async () => ((await routes(a)) === 1 && (await routes(b)) === 1 ? true : undefined), 20_000, 100);
    const tls = { caFile: join(dir, 'ca.crt') };
    const onB = await connect({
      servers: `tls://127.0.0.1:${b.port}`,
      tls,
      user: 'hub-a',
      pass: PASSWORDS.TMA_NATS_HUB_A_PASSWORD,
      inboxPrefix: '_INBOX.hub-a',
    });
    const onA = await connect({
      servers: `tls://127.0.0.1:${a.port}`,
      tls,
      user: 'hub-b',
      pass: PASSWORDS.TMA_NATS_HUB_B_PASSWORD,
      inboxPrefix: '_INBOX.hub-b',
    });
    conns.push(onA, onB);
    const sub = onB.subscribe('tma.act.hub-a.probe', { max: 1 });
    await onB.flush();
    // Interest crosses the route a moment after the subscription: publish until it arrives.
    const got = (async () => {
      for await (const m of sub) return m.string();
      return null;
    })();
    const t = setInterval(() => onA.publish('tma.act.hub-a.probe', 'crossed'), 100);
    try {
      expect(await got).toBe('crossed');
    } finally {
      clearInterval(t);
    }
  });

  it('a node routing in without a certificate, or with one from another CA, is refused', async () => {
    const bare = await plan();
    const stranger = await plan();
    intruder(bare, a, 'none', 'intruder-bare');
    intruder(stranger, a, 'stranger', 'intruder-stranger');
    await until(async () => ((await routes(bare)) !== null && (await routes(stranger)) !== null ? true : undefined), 10_000, 100);
    await new Promise((r) => setTimeout(r, ROUTE_TRIES_MS));
    expect(await routes(a)).toBe(1);
    expect(await routes(bare)).toBe(0);
    expect(await routes(stranger)).toBe(0);
    // They did try, and were turned away at the TLS handshake.
    expect(bare.log + stranger.log).toMatch(/route/i);
    expect(a.log).toMatch(/TLS route handshake error|tls: /i);
  });

  it('a client with no user is refused', async () => {
    await expect(connect({ servers: `tls://127.0.0.1:${a.port}`, tls: { caFile: join(dir, 'ca.crt') }, reconnect: false })).rejects.toThrow(
      /Authorization Violation/i,
    );
  });
});

describe('deploy/fleet-compose.yaml node commands: routes by password', { timeout: 60_000 }, () => {
  const doc = yaml.load(readFileSync(join(DEPLOY, 'fleet-compose.yaml'), 'utf8')) as { services: Record<string, { command: string[] }> };
  const nodeConf = join(dir, 'compose-node.conf');

  /** The service's command, as compose would run it here: the password interpolated, names and ports made local. */
  function composeArgs(service: string, n: Node, peers: Record<string, Node>): string[] {
    return doc.services[service]!.command.map((w) => {
      let x = w.replace(/\$\{TMA_NATS_ROUTE_PASSWORD(:\?[^}]*)?\}/g, ROUTE_PASSWORD);
      x = x.replace('0.0.0.0:6222', `127.0.0.1:${n.clusterPort}`);
      for (const [name, p] of Object.entries(peers)) x = x.replaceAll(`${name}:6222`, `127.0.0.1:${p.clusterPort}`);
      return x.replace('/etc/nats/compose-node.conf', nodeConf).replace(/^\/data$/, join(dir, `js-${service}`));
    });
  }

  it('two nodes route with the password, and one routing in without it is refused', async () => {
    writeFileSync(
      nodeConf,
      readFileSync(join(DEPLOY, 'nats/compose-node.conf'), 'utf8').replace(
        'include ./tma-account.conf',
        `include "${relative(dir, join(DEPLOY, 'nats/tma-account.conf'))}"`,
      ),
    );
    const na = await plan();
    const nb = await plan();
    const nc = await plan();
    const peers = { 'nats-a': na, 'nats-b': nb, 'nats-c': nc };
    for (const [service, n] of [
      ['nats-a', na],
      ['nats-b', nb],
    ] as const) {
      const args = composeArgs(service, n, peers);
      expect(args.join(' ')).toContain(`tma-route:${ROUTE_PASSWORD}@127.0.0.1:${n.clusterPort}`);
      launch(n, [...args, '-a', '127.0.0.1', '-p', String(n.port), '-m', String(n.monitor)], PASSWORDS);
    }
    await until(async () => ((await routes(na)) === 1 && (await routes(nb)) === 1 ? true : undefined), 20_000, 100);
    // A node with the routes but not the password.
    const bare = await plan();
    launch(bare, [
      '-a',
      '127.0.0.1',
      '-p',
      String(bare.port),
      '-m',
      String(bare.monitor),
      '--cluster_name',
      'tma-fleet',
      '--cluster',
      `nats://127.0.0.1:${bare.clusterPort}`,
      '--routes',
      `nats://127.0.0.1:${na.clusterPort}`,
    ]);
    await until(async () => ((await routes(bare)) !== null ? true : undefined), 10_000, 100);
    await new Promise((r) => setTimeout(r, ROUTE_TRIES_MS));
    expect(await routes(na)).toBe(1);
    expect(await routes(bare)).toBe(0);
    expect(na.log).toMatch(/authentication error|Authorization Violation/i);
  });
});
