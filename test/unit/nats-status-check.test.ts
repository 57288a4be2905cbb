// Host statuses on NATS are sealed by their owner and checked by every reader (status-check.ts).

import { expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { checkStatus, sealStatus } from '../../hub/nats/status-check.js';
import { sealRow } from '../../hub/nats/row-check.js';
import { hostWire } from '../../hub/nats/wire.js';
import { newHostRecord } from '../../hub/store/host-record.js';
import { statusKey } from '../../hub/nats/keys.js';

const key = randomBytes(32);
const enc = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));
const wire = hostWire(newHostRecord('build1', 'ws'), 'hub-a');
const k = statusKey('build1');

it('reads back the status its owner sealed, as written', () => {
  const c = checkStatus(key, k, enc(sealStatus(key, k, wire)));
  expect(c).toEqual({ ok: true, host: 'build1', wire });
});

it('refuses a status unsealed, altered, sealed for another host or under another key', () => {
  const sealed = sealStatus(key, k, wire);
  expect(checkStatus(key, k, enc(wire))).toMatchObject({ ok: false, reason: expect.stringMatching(/no fleet MAC/) as string });
  expect(checkStatus(key, k, enc({ ...sealed, reachable: !wire.reachable }))).toMatchObject({
    ok: false,
    reason: expect.stringMatching(/does not verify/) as string,
  });
  expect(checkStatus(key, statusKey('laptop'), enc(sealed))).toMatchObject({ ok: false, reason: expect.stringMatching(/does not verify/) as string });
  expect(checkStatus(randomBytes(32), k, enc(sealed))).toMatchObject({ ok: false, reason: expect.stringMatching(/does not verify/) as string });
  expect(checkStatus(key, k, new TextEncoder().encode('{'))).toMatchObject({ ok: false, reason: 'value is not JSON' });
  expect(checkStatus(key, 'o.kYnVpbGQx', enc(sealed))).toMatchObject({ ok: false, reason: 'key is not s.<host>' });
});

it('a row MAC under the same key never passes for a status MAC', () => {
  const row = sealRow(key, k, 'hub-a', 'inc', { host: 'build1' } as never);
  expect(checkStatus(key, k, enc({ ...wire, m: row.m }))).toMatchObject({ ok: false });
});
