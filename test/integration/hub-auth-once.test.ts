// Each request's token is looked up once, whatever the route: the principal a route acts on is the
// one the check found (a reload between two lookups could otherwise make them disagree), and the
// refusals are still counted under the endpoint the caller aimed at.

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { TokenBook } from '../../hub/http/auth.js';
import { TOKENS, sample, startTestHub, type TestHub } from '../support/hub-harness.js';

let hub: TestHub;
beforeEach(async () => {
  hub = await startTestHub();
});
afterEach(async () => {
  vi.restoreAllMocks();
  await hub.close();
});

const send = (method: string, path: string, token: string | null, body?: string) =>
  fetch(`${hub.url}${path}`, {
    method,
    headers: { ...(token === null ? {} : { authorization: `Bearer ${token}` }), ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body } : {}),
  });

describe('client authentication', () => {
  it('looks each token up once per request, on every route that needs one', async () => {
    const lookup = vi.spyOn(TokenBook.prototype, 'lookup');
    const cases: [string, string, string | null, number, string?][] = [
      ['GET', '/v1/whoami', TOKENS.viewer, 200],
      ['GET', '/v1/agents', TOKENS.viewer, 200],
      ['GET', '/metrics', TOKENS.viewer, 200],
      ['GET', '/v1/notifications', TOKENS.viewer, 200],
      ['DELETE', '/v1/hosts/build1', TOKENS.viewer, 403],
      ['DELETE', '/v1/hosts/nosuch', TOKENS.operator, 404],
      ['DELETE', '/v1/hosts/build1', TOKENS.build1, 403],
      ['POST', '/v1/act', TOKENS.viewer, 403, '{}'],
      ['GET', '/v1/whoami', 'nope', 401],
    ];
    for (const [method, path, token, status, body] of cases) {
      lookup.mockClear();
      const res = await send(method, path, token, body);
      await res.arrayBuffer();
      expect({ method, path, status: res.status, lookups: lookup.mock.calls.length }).toEqual({ method, path, status, lookups: 1 });
    }
  });

  it('answers whoami from the principal the check found', async () => {
    const res = await hub.get('/v1/whoami', TOKENS.operator);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(await res.json()).toEqual({ schema: 1, name: 'olga', role: 'operator' });
  });

  it('counts refusals under the endpoint, a host name in the path not included', async () => {
    expect((await send('DELETE', '/v1/hosts/build1', TOKENS.viewer)).status).toBe(403);
    const missing = await send('DELETE', '/v1/hosts/build1', null);
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toBe('Bearer');
    expect(await missing.json()).toEqual({ schema: 1, error: 'missing bearer token' });
    expect((await hub.get('/v1/whoami', TOKENS.build1)).status).toBe(403);
    expect((await hub.get('/v1/notifications', null)).status).toBe(401);
    const m = await hub.metricsText();
    expect(sample(m, 'tma_hub_auth_failures_total{endpoint="/v1/hosts",reason="wrong-kind"}')).toBe(1);
    expect(sample(m, 'tma_hub_auth_failures_total{endpoint="/v1/hosts",reason="missing"}')).toBe(1);
    expect(sample(m, 'tma_hub_auth_failures_total{endpoint="/v1/whoami",reason="wrong-kind"}')).toBe(1);
    expect(sample(m, 'tma_hub_auth_failures_total{endpoint="/v1/notifications",reason="missing"}')).toBe(1);
    expect(m).not.toContain('build1",reason=');
  });

  it('leaves unknown paths and the plain subscribe answer unauthenticated, as before', async () => {
    expect((await send('GET', '/v1/nothing', null)).status).toBe(404);
    expect((await send('POST', '/v1/notifications', null)).status).toBe(404);
    expect((await send('GET', '/v1/subscribe', null)).status).toBe(406);
  });
});
