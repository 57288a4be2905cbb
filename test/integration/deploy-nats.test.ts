// deploy/'s NATS parts checked by the real nats-server (Debian's package): every flag the compose
// file gives a node is one it has. The node configs themselves, with their account, users and TLS,
// are loaded and run in deploy-nats-auth.test.ts.

import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { expect, it } from 'vitest';

const NATS = join(import.meta.dirname, '../../deploy/nats');
const yaml = createRequire(import.meta.url)('js-yaml') as { load(text: string): unknown };

it('nats-server has every flag deploy/fleet-compose.yaml gives a node', () => {
  const help = spawnSync('nats-server', ['--help'], { encoding: 'utf8', timeout: 10_000 });
  const text = `${help.stdout}${help.stderr}`;
  expect(text).toContain('--jetstream');
  const doc = yaml.load(readFileSync(join(NATS, '../fleet-compose.yaml'), 'utf8')) as { services: Record<string, { command?: string[] }> };
  const flags = Object.entries(doc.services)
    .filter(([name]) => name.startsWith('nats-'))
    .flatMap(([, s]) => s.command!.filter((w) => w.startsWith('--')));
  expect(flags.length).toBeGreaterThan(10);
  for (const f of new Set(flags)) expect(text, f).toMatch(new RegExp(`\\s${f}[\\s,]`));
  // And the binary the systemd unit names is the one installed.
  expect(execFileSync('sh', ['-c', 'command -v nats-server'], { encoding: 'utf8' }).trim()).toBe('/usr/sbin/nats-server');
});
