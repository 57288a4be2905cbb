// The owning hub's KV writes are coalesced (issue 32): a row changed ten times within the write
// window goes out once, as it stands last; puts of one run are all in flight together.
import { describe, expect, it } from 'vitest';
import pino from 'pino';
import type { KV } from '@nats-io/kv';
import { OwnedWriter } from '../../hub/nats/writer.js';
import { newHostRecord, type HostRecord } from '../../hub/store/host-record.js';
import { rowEntry } from '../../hub/store/pieces.js';
import type { ProtocolRow } from '../../shared/row.js';
import { when } from '../support/when.js';

function recordingKv() {
  const puts: { key: string; value: string }[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const kv = {
    put: async (key: string, value: string) => {
      puts.push({ key, value });
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await new Promise((r) => setTimeout(r, 5));
      inFlight--;
      return puts.length;
    },
    delete: async () => 0,
  };
  return { kv: kv as unknown as KV, puts, maxInFlight: () => maxInFlight };
}

const row = (pane: string, title: string): ProtocolRow =>
  ({ host: 'h1', server: 'default', pane, session: 's', window: 0, title, state: 'idle' }) as unknown as ProtocolRow;

function host(): HostRecord {
  const h = newHostRecord('h1', 'ws');
  h.reachable = true;
  h.servers = new Map([['default', { incarnation: 'inc', rows: new Map() }]]);
  return h;
}

describe('OwnedWriter', () => {
  it('writes a row changed ten times within the window once, as it stands last', async () => {
    const rows = recordingKv();
    const hosts = recordingKv();
    const h = host();
    const w = new OwnedWriter(
      rows.kv,
      hosts.kv,
      'hub-a',
      () => h,
      () => true,
      () => [],
      Date.now,
      pino({ level: 'silent' }),
    );
    try {
      for (let i = 0; i < 10; i++) {
        h.servers.get('default')!.rows.set('%1', rowEntry(row('%1', `t${i}`)));
        w.mark('h1');
        await new Promise((r) => setTimeout(r, 2)); // frames 2 ms apart: ten inside one window
      }
      await when('written', () => (w.idle && rows.puts.length > 0 ? true : undefined), 2_000, 5);
      // Once, or twice should a loaded machine stretch the 2 ms sleeps past the window; a write per
      // change (the old schedule) makes ten.
      expect(rows.puts.length).toBeLessThanOrEqual(2);
      expect(JSON.parse(rows.puts.at(-1)!.value).r.title).toBe('t9');
    } finally {
      w.close();
    }
  });

  it('sends every row of a run before awaiting any', async () => {
    const rows = recordingKv();
    const hosts = recordingKv();
    const h = host();
    for (let i = 0; i < 20; i++) h.servers.get('default')!.rows.set(`%${i}`, rowEntry(row(`%${i}`, 'x')));
    const w = new OwnedWriter(
      rows.kv,
      hosts.kv,
      'hub-a',
      () => h,
      () => true,
      () => [],
      Date.now,
      pino({ level: 'silent' }),
    );
    try {
      w.mark('h1');
      await when('written', () => (w.idle && rows.puts.length === 20 ? true : undefined), 2_000, 5);
      expect(rows.maxInFlight()).toBe(20);
    } finally {
      w.close();
    }
  });
});
