// `tma hub --nats …` with no fleet_key_file: the fleet secret is made once beside hub.toml (0600)
// and said, then read by every later start and by a second hub sharing that hub.toml; a file too
// short to be a secret stops the start. A hub without NATS needs none.

import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { withDefaultFleetKey } from '../../cli/hub-files.js';
import { HubConfigError } from '../../hub/config/config.js';
import { testConfig } from '../support/hub-harness.js';

let dir = '';
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const onNats = () => testConfig({ nats: { servers: ['nats://127.0.0.1:4222'], replicas: 1, leaseMs: 3000 } });

it('makes fleet.key beside hub.toml once, 0600, and reads the same one after', () => {
  dir = mkdtempSync(join(tmpdir(), 'tma-fleetkey-'));
  const said: string[] = [];
  const first = withDefaultFleetKey(onNats(), join(dir, 'hub.toml'), (l) => said.push(l));
  expect(said).toEqual([expect.stringContaining(`made the fleet secret ${join(dir, 'fleet.key')} (0600)`)]);
  expect(statSync(join(dir, 'fleet.key')).mode & 0o777).toBe(0o600);
  expect(first.nats!.fleetKey!.toString()).toMatch(/^[0-9a-f]{64}$/);
  const again = withDefaultFleetKey(onNats(), join(dir, 'hub.toml'), (l) => said.push(l));
  expect(again.nats!.fleetKey).toEqual(first.nats!.fleetKey);
  expect(said).toHaveLength(1);
});

it('leaves a configured key and a hub without NATS alone, and refuses a short file', () => {
  dir = mkdtempSync(join(tmpdir(), 'tma-fleetkey-'));
  const given = Buffer.from('x'.repeat(40));
  const cfg = { ...onNats(), nats: { ...onNats().nats!, fleetKey: given } };
  expect(withDefaultFleetKey(cfg, join(dir, 'hub.toml'), () => undefined).nats!.fleetKey).toBe(given);
  expect(withDefaultFleetKey(testConfig(), join(dir, 'hub.toml'), () => undefined).nats).toBeUndefined();
  writeFileSync(join(dir, 'fleet.key'), 'short\n', { mode: 0o600 });
  expect(() => withDefaultFleetKey(onNats(), join(dir, 'hub.toml'), () => undefined)).toThrow(HubConfigError);
});
