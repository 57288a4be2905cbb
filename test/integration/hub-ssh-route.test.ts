// GET /v1/hosts/NAME/ssh: where `tma jump` can reach a host the hub dials over ssh. The client
// gets user, host and port from the hub's `[[ssh]]` entry, never the hub's key or known_hosts.

import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestHub, testConfig, TOKENS, type TestHub } from '../support/hub-harness.js';

let hub: TestHub;

beforeAll(async () => {
  const ssh = [{ name: 'gpu1', host: '127.0.0.1', port: 1, user: 'ops', identity: '/nonexistent/hub-key', known_hosts: '/nonexistent/known', command: 'true' }];
  // Port 1 refuses at once: the hub's own dial fails quietly and retries; the route only reads the entry.
  hub = await startTestHub({ config: testConfig({ ssh }) });
});

afterAll(async () => {
  await hub?.close();
});

it('hands a client user, host and port, and nothing of the hub key', async () => {
  const res = await hub.get('/v1/hosts/gpu1/ssh', TOKENS.viewer);
  expect(res.status).toBe(200);
  const text = await res.text();
  expect(JSON.parse(text)).toEqual({ schema: 1, host: 'gpu1', ssh: { user: 'ops', host: '127.0.0.1', port: 1 } });
  expect(text).not.toContain('hub-key');
  expect(text).not.toContain('known');
});

it('says null for a host with no [[ssh]] entry, and refuses a missing token', async () => {
  expect(await (await hub.get('/v1/hosts/build1/ssh', TOKENS.viewer)).json()).toEqual({ schema: 1, host: 'build1', ssh: null });
  expect((await hub.get('/v1/hosts/gpu1/ssh', null)).status).toBe(401);
});
