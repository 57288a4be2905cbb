// deploy/: three hubs on a three-node NATS cluster, as systemd units and as a compose file. What
// people copy must hold together: every tma command a unit runs is one the CLI accepts, the compose
// file is YAML naming the parts it promises, and the hub.toml files load.

import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { parse as parseToml, stringify as stringifyToml } from 'smol-toml';
import { describe, expect, it } from 'vitest';
import { parseArgv } from '../../cli/args.js';
import { VERB_FLAGS } from '../../cli/verb-table.js';
import { parseHubConfig } from '../../hub/config/config.js';

const DEPLOY = join(import.meta.dirname, '../../deploy');
const read = (p: string) => readFileSync(join(DEPLOY, p), 'utf8');
const yaml = createRequire(import.meta.url)('js-yaml') as { load(text: string): unknown };

/** The words of a unit's ExecStart, with systemd's specifiers given sample values. */
function execStart(unit: string, instance: string): string[] {
  const line = read(unit)
    .split('\n')
    .find((l) => l.startsWith('ExecStart='));
  if (!line) throw new Error(`${unit}: no ExecStart`);
  return line
    .slice('ExecStart='.length)
    .replaceAll('%i', instance)
    .replaceAll('%h', '/home/u')
    .replace(/\$\{(\w+)\}/g, 'ws://hub.example:7480')
    .split(/\s+/)
    .filter(Boolean);
}

/** The tma words of a command line (after `tma`), parsed by the CLI's own verb table. */
function tmaArgs(words: string[]): string[] {
  const at = words.indexOf('tma');
  expect(at, words.join(' ')).toBeGreaterThanOrEqual(0);
  return words.slice(at + 1);
}

/** A hub.toml whose token files are read as distinct tokens named after them; `[nats]` set apart. */
function loadHubToml(p: string): { nats: Record<string, unknown> | undefined; config: ReturnType<typeof parseHubConfig> } {
  const raw = parseToml(read(p)) as Record<string, unknown>;
  const { nats, ...rest } = raw;
  const config = parseHubConfig(join(DEPLOY, p), stringifyToml(rest), (path) => `token-for-${path}`);
  return { nats: nats as Record<string, unknown> | undefined, config };
}

describe('deploy/ units', () => {
  const units = ['tma-hub.service', 'tma-collector.service', 'nats/tma-hub@.service'];
  it.each(units)('%s runs a tma command the CLI accepts', (unit) => {
    const args = tmaArgs(execStart(unit, '127.0.0.1:7481'));
    expect(() => parseArgv(args, VERB_FLAGS)).not.toThrow();
  });

  it('the hub template listens where its instance says and reads the shared hub.toml', () => {
    const p = parseArgv(tmaArgs(execStart('nats/tma-hub@.service', '127.0.0.1:7482')), VERB_FLAGS);
    expect(p.verb).toBe('hub');
    expect(p.opts).toMatchObject({ listen: '127.0.0.1:7482', 'no-local': true });
    expect(p.globals.config).toBe('/etc/tma/hub.toml');
  });

  it('a flag the CLI does not know would be caught', () => {
    expect(() => parseArgv(['hub', '--no-local', '--lsiten', '0.0.0.0:7480'], VERB_FLAGS)).toThrow();
  });

  it('each NATS node runs its own config, and there is one for each of three nodes', () => {
    expect(execStart('nats/nats-server@.service', 'nats-b')).toEqual(['/usr/sbin/nats-server', '--config', '/etc/nats/nats-b.conf']);
    const confs = readdirSync(join(DEPLOY, 'nats')).filter((f) => /^nats-.\.conf$/.test(f));
    expect(confs.sort()).toEqual(['nats-a.conf', 'nats-b.conf', 'nats-c.conf']);
    for (const c of confs) {
      const text = read(`nats/${c}`);
      expect(text).toContain(`server_name: ${c.replace('.conf', '')}`);
      for (const n of ['a', 'b', 'c']) expect(text).toContain(`nats-route://nats-${n}.lan:6222`);
    }
  });
});

describe('deploy/ hub.toml for a fleet on NATS', () => {
  it.each(['nats/hub-fleet.example.toml', 'nats/hub-compose.toml'])('%s loads, with a [nats] section of servers, a user and the fleet secret', (p) => {
    const { nats, config } = loadHubToml(p);
    expect(config.fleetHubs?.length).toBe(3);
    expect(nats).toBeDefined();
    expect(Object.keys(nats!).every((k) => ['url', 'servers', 'user', 'password_file', 'tls_ca_file', 'fleet_key_file', 'allow_plaintext'].includes(k))).toBe(
      true,
    );
    expect(nats!.user).toMatch(/^hub-[abc]$/);
    expect(nats!.fleet_key_file).toBeTruthy();
    // Plain NATS only where the file says the network is private to this machine.
    expect(nats!.url).toMatch(nats!.allow_plaintext === true ? /^nats:\/\/[^\s/]+:\d+$/ : /^tls:\/\/[^\s/]+:\d+$/);
    expect(nats!.servers).toHaveLength(3);
    for (const s of nats!.servers as string[]) expect(s).toMatch(/^(nats|tls):\/\/[^\s/]+:\d+$/);
    expect((nats!.servers as string[]).includes(nats!.url as string)).toBe(true);
  });
});

describe('deploy/fleet-compose.yaml', () => {
  const doc = yaml.load(read('fleet-compose.yaml')) as {
    services: Record<string, { command?: string[]; ports?: string[]; volumes?: string[]; image?: string; build?: { context: string; dockerfile: string } }>;
  };

  it('is YAML holding three NATS nodes and three hubs', () => {
    expect(Object.keys(doc.services).sort()).toEqual(['hub-a', 'hub-b', 'hub-c', 'nats-a', 'nats-b', 'nats-c']);
  });

  it('clusters the NATS nodes with JetStream, each routing to the other two with the route password', () => {
    // The password compose interpolates, refusing to start without it (${VAR:?message}).
    const creds = 'tma-route:${TMA_NATS_ROUTE_PASSWORD:?set TMA_NATS_ROUTE_PASSWORD}@';
    for (const n of ['a', 'b', 'c']) {
      const cmd = doc.services[`nats-${n}`]!.command!;
      expect(cmd).toContain('--jetstream');
      expect(cmd[cmd.indexOf('--name') + 1]).toBe(`nats-${n}`);
      // The cluster port asks the same user and password of every route.
      expect(cmd[cmd.indexOf('--cluster') + 1]).toBe(`nats://${creds}0.0.0.0:6222`);
      const routes = cmd[cmd.indexOf('--routes') + 1]!.split(',');
      expect(routes.sort()).toEqual(['a', 'b', 'c'].filter((m) => m !== n).map((m) => `nats://${creds}nats-${m}:6222`));
    }
  });

  it('builds the hubs from deploy/Containerfile, mounts a hub.toml that exists, and names them as published', () => {
    const { config } = loadHubToml('nats/hub-compose.toml');
    const published: string[] = [];
    for (const n of ['a', 'b', 'c']) {
      const s = doc.services[`hub-${n}`]!;
      expect(s.build).toEqual({ context: '..', dockerfile: 'deploy/Containerfile' });
      expect(readFileSync(join(DEPLOY, '..', s.build!.dockerfile), 'utf8')).toContain('/config/hub.toml');
      const mount = s.volumes!.find((v) => v.endsWith(':/config/hub.toml:ro'))!;
      expect(mount.split(':')[0]).toBe('./nats/hub-compose.toml');
      published.push(`ws://127.0.0.1:${s.ports![0]!.split(':')[0]}`);
    }
    expect(config.fleetHubs).toEqual(published);
  });
});
