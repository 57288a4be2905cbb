// What one client can cost the hub: a huge body, thousands of idle connections, a flood of bad
// tokens. Each is bounded, and legitimate requests keep working meanwhile.

import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { until } from '../support/hub-fake-collector.js';
import { TOKENS, sample, startTestHub, type TestHub } from '../support/hub-harness.js';

let hub: TestHub | null = null;
const sockets: Socket[] = [];

afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await hub?.close();
  hub = null;
});

it('POST /v1/act stops reading at 16 KiB: a 50 MiB body is refused long before it is sent', async () => {
  hub = await startTestHub();
  const url = new URL(`${hub.url}/v1/act`);
  const chunk = Buffer.alloc(64 * 1024, 'x');
  const { status, written } = await new Promise<{ status: number; written: number }>((resolve, reject) => {
    let written = 0;
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        headers: { authorization: `Bearer ${TOKENS.operator}`, 'content-type': 'application/json' },
      },
      (res) => {
        res.resume();
        resolve({ status: res.statusCode ?? 0, written });
        req.destroy();
      },
    );
    req.on('error', (e) => (written > 0 ? undefined : reject(e)));
    const pump = () => {
      while (written < 50 * 1024 * 1024) {
        written += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', pump);
      }
      req.end();
    };
    pump();
  });
  expect(status).toBe(413);
  // The hub answered after a small fraction of the body (socket buffers hold some in flight).
  expect(written).toBeLessThan(8 * 1024 * 1024);
}, 30_000);

it('caps connections per address; idle ones are closed; other clients are served meanwhile', async () => {
  hub = await startTestHub({ connectionLimits: { perAddress: 20, idleTimeoutMs: 1500 } });
  const port = hub.port;
  const closed: boolean[] = [];
  // Forty connections from another loopback address that never send a byte.
  await Promise.all(
    Array.from(
      { length: 40 },
      (_, i) =>
        new Promise<void>((resolve) => {
          const s = connect({ host: '127.0.0.1', port, localAddress: '127.0.0.2' }, () => resolve());
          closed[i] = false;
          s.on('close', () => (closed[i] = true));
          s.on('error', () => resolve());
          sockets.push(s);
        }),
    ),
  );
  // Those over the cap are closed at once; this client (another address) is served.
  await until(() => (closed.filter(Boolean).length >= 20 ? true : undefined), 3000);
  const t0 = Date.now();
  expect((await hub.get('/v1/agents')).status).toBe(200);
  expect(Date.now() - t0).toBeLessThan(2000);
  // The rest, idle, are closed soon after.
  await until(() => (closed.every(Boolean) ? true : undefined), 10_000);
  expect(sample(await hub.metricsText(), 'tma_hub_connections_refused_total')).toBeGreaterThanOrEqual(20);
});

it('a flood of bad tokens is counted in full and logged only as a sample', async () => {
  hub = await startTestHub();
  const h = hub;
  for (let i = 0; i < 20; i++) await Promise.all(Array.from({ length: 10 }, () => h.get('/v1/agents', 'not-a-token').then((r) => r.arrayBuffer())));
  const lines = h.logLines.filter((l) => l.includes('request refused'));
  expect(lines.length).toBeGreaterThanOrEqual(1);
  expect(lines.length).toBeLessThanOrEqual(2);
  expect(sample(await h.metricsText(), 'tma_hub_auth_failures_total{endpoint="/v1/agents",reason="unknown"}')).toBe(200);
});
