// KV puts as publishes acked on one inbox (issue 32: no per-request Error objects), on a real
// nats-server: a put lands and resolves with its sequence, many go out before any is awaited, a
// subject no stream takes is refused with a reason, and nothing is left pending.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { Kvm } from '@nats-io/kv';
import { startNats, type NatsNode } from '../support/nats-server.js';
import { AckedPublisher } from '../../hub/nats/acked-publish.js';

let nats: NatsNode;
let nc: NatsConnection;
beforeAll(async () => {
  nats = await startNats();
  nc = await connect({ servers: nats.url });
});
afterAll(async () => {
  await nc?.close();
  nats?.stop();
});

describe('AckedPublisher', () => {
  it('puts into a bucket, resolving with each sequence; refuses a subject with no stream', async () => {
    const kv = await new Kvm(nc).create('t-acked', { history: 1 });
    const pub = new AckedPublisher(nc, 2000);
    try {
      const seqs = await Promise.all(Array.from({ length: 200 }, (_, i) => pub.publish(`$KV.t-acked.k${i}`, JSON.stringify({ i }))));
      expect(new Set(seqs).size).toBe(200);
      expect(Math.max(...seqs)).toBe(200);
      expect((await kv.get('k199'))?.json()).toEqual({ i: 199 });
      await expect(pub.publish('no.stream.here', 'x')).rejects.toThrow(/no JetStream ack/);
      expect(pub.inFlight).toBe(0);
    } finally {
      pub.close();
    }
  });
});
