import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { SharedLines, wsSink } from '../../hub/http/stream-sinks.js';
import { MemoryFleetStore as FleetStore } from '../../hub/store/memory-store.js';
import { EPOCH_A, SERVER, protoRow } from '../support/hub-fake-collector.js';

const ends: (() => void)[] = [];
afterEach(() => {
  for (const end of ends.splice(0)) end();
});

/** A real WebSocket pair on loopback: the hub's end and a reader collecting text messages. */
async function pair(): Promise<{ server: WebSocket; got: string[]; binary: boolean[] }> {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await once(wss, 'listening');
  const accepted = once(wss, 'connection');
  const client = new WebSocket(`ws://127.0.0.1:${(wss.address() as AddressInfo).port}`);
  const got: string[] = [];
  const binary: boolean[] = [];
  client.on('message', (d, isBinary) => {
    got.push(String(d));
    binary.push(isBinary);
  });
  const [server] = (await accepted) as [WebSocket];
  await once(client, 'open');
  ends.push(() => {
    client.terminate();
    wss.close();
  });
  return { server, got, binary };
}

async function until(cond: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('stream sinks', () => {
  it('a text in parts arrives as one text message; batched writes arrive as separate messages, in order', async () => {
    const { server, got, binary } = await pair();
    const sink = wsSink(server, { maxBufferedBytes: 1 << 20, drainTimeoutMs: 1000 }, () => {});
    sink.write([Buffer.from('{"a":'), Buffer.from('[1,2'), Buffer.from(']}')]);
    sink.batch!(() => {
      sink.write('{"n":1}');
      sink.write(Buffer.from('{"n":2}'));
    });
    sink.write('{"n":3}');
    await until(() => got.length >= 4);
    expect(got).toEqual(['{"a":[1,2]}', '{"n":1}', '{"n":2}', '{"n":3}']);
    expect(binary).toEqual([false, false, false, false]);
  });

  it('shared lines reach each reader as separate text messages, framed once, in order with other sends', async () => {
    const a = await pair();
    const b = await pair();
    const long = JSON.stringify({ s: 'é'.repeat(200) });
    const huge = JSON.stringify({ s: 'x'.repeat(70_000) });
    const shared = new SharedLines(['{"n":1}', long, Buffer.from(huge), [Buffer.from('{"n"'), Buffer.from(':4}')]]);
    for (const p of [a, b]) {
      const sink = wsSink(p.server, { maxBufferedBytes: 1 << 20, drainTimeoutMs: 1000 }, () => {});
      sink.write('{"n":0}');
      sink.writeShared!(shared);
      sink.write('{"n":5}');
    }
    for (const p of [a, b]) {
      await until(() => p.got.length >= 6);
      expect(p.got).toEqual(['{"n":0}', '{"n":1}', long, huge, '{"n":4}', '{"n":5}']);
      expect(p.binary.every((x) => !x)).toBe(true);
    }
  });

  it("readers joining at one version share the document's row bytes instead of a copy each", () => {
    const store = new FleetStore({ clock: () => 1 });
    const o = {};
    store.hello('h', { transport: 'ws', epoch: EPOCH_A, collectorVersion: '1', actionsAllowed: [] }, o);
    store.applySnapshot('h', o, { epoch: EPOCH_A, seq: 1, complete: true, servers: [{ server: SERVER, incarnation: 'i', rows: [protoRow({ pane: '%1' })] }] });
    const a = store.documentParts();
    const b = store.documentParts();
    expect(a.length).toBeGreaterThan(2);
    a.slice(1, -1).forEach((part, i) => expect(part).toBe(b[i + 1]));
    expect(Buffer.concat(a).toString()).toBe(JSON.stringify(store.document()));
  });
});
