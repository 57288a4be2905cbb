// Claims and liveness in the hosts bucket are sealed by the hub that writes them (claim-seal.ts).

import { expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { fleetSeal } from '../../hub/nats/claim-seal.js';
import { livenessKey, ownerKey } from '../../hub/nats/keys.js';

const key = randomBytes(32);
const seal = fleetSeal(key);
const claim = { hub: 'hub-a.m-1', until_ms: 1, hub_lease: true };

it('opens what it sealed, as written', () => {
  expect(seal.open(ownerKey('build1'), seal.seal(ownerKey('build1'), claim))).toEqual(claim);
});

it('refuses a value unsealed, altered, moved to another key or sealed under another key', () => {
  const text = seal.seal(ownerKey('build1'), claim);
  expect(seal.open(ownerKey('build1'), JSON.stringify(claim))).toBeNull();
  expect(seal.open(ownerKey('build1'), text.replace('hub-a.m-1', 'evil'))).toBeNull();
  expect(seal.open(ownerKey('laptop'), text)).toBeNull();
  expect(seal.open(livenessKey('hub-a.m-1'), text)).toBeNull();
  expect(fleetSeal(randomBytes(32)).open(ownerKey('build1'), text)).toBeNull();
  expect(seal.open(ownerKey('build1'), 'not json')).toBeNull();
  expect(seal.open(ownerKey('build1'), '[1]')).toBeNull();
});
