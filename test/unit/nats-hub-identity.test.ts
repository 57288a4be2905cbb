// A hub's id and inbox prefix start with its NATS user's name, so per-user rights can be written
// for them (deploy/nats/tma-account.conf); a name can never reach into another user's subjects.

import { expect, it } from 'vitest';
import { credsUserName, hubScope, inboxPrefix, makeHubId } from '../../hub/nats/hub-identity.js';

const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
const creds = (claims: object) =>
  `-----BEGIN NATS USER JWT-----\n${b64({ typ: 'JWT', alg: 'ed25519-nkey' })}.${b64(claims)}.c2ln\n------END NATS USER JWT------\n\n` +
  `-----BEGIN USER NKEY SEED-----\nSUAXXX\n------END USER NKEY SEED------\n`;

it('names a hub under a user <user>.<machine>-<random>, and its inboxes _INBOX.<user>', () => {
  const id = makeHubId(hubScope({ user: { name: 'hub-a', password: 'x' } }), 'build.lan');
  expect(id).toMatch(/^hub-a\.build_lan-[0-9a-f]{8}$/);
  expect(inboxPrefix('hub-a')).toBe('_INBOX.hub-a');
  expect(makeHubId('hub-a', 'm')).not.toBe(makeHubId('hub-a', 'm'));
});

it('without a user, the machine and a random suffix, and the client’s own inboxes', () => {
  expect(makeHubId(hubScope({}), 'vm1')).toMatch(/^vm1-[0-9a-f]{8}$/);
  expect(inboxPrefix(null)).toBeUndefined();
});

it('a user name with dots or wildcards stays one subject token', () => {
  for (const name of ['hub.b', 'hub-*', 'a>b', 'x y', '']) expect(hubScope({ user: { name, password: 'x' } }), name).toMatch(/^[A-Za-z0-9_-]+$/);
  expect(hubScope({ user: { name: 'hub.b', password: 'x' } })).toBe('hub_b');
});

it('takes the user name from a creds file’s JWT (what a template’s {{name()}} is)', () => {
  expect(credsUserName(creds({ name: 'hub-c', sub: 'UABC' }))).toBe('hub-c');
  expect(hubScope({}, creds({ name: 'hub-c' }))).toBe('hub-c');
  expect(credsUserName(creds({ sub: 'UABC' }))).toBeNull();
  expect(credsUserName('not a creds file')).toBeNull();
  expect(hubScope({}, 'not a creds file')).toBeNull();
});
