// The hub's own cost per piece of work, measured in-process on CPU time (so a loaded machine moves
// the figures little): decoding a frame (fast path against the schema alone), applying its rows,
// one flush to 50 events + 10 changes readers, a full read while rows change, and the heap a row
// costs. Each beside its baseline from the same run. Used by bench/hub before its socket phases.

import { pino } from 'pino';
import { HubMetrics } from '../hub/metrics.js';
import type { StreamSink, StreamText } from '../hub/http/stream-sinks.js';
import { MemoryFleetStore } from '../hub/store/memory-store.js';
import { StreamHub } from '../hub/http/streams.js';
import { EMPTY_SELECTOR } from '../shared/selectors.js';
import { collectorFrame, decodeFrame, type CollectorFrame } from '../shared/protocol.js';
import { EPOCH, PANES, SERVER, benchRow } from './hub-load.js';

const cpuMs = () => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1000;
};

/** CPU ms of `fn`, best of `reps` (the least disturbed run). */
function cpuOf(fn: () => void, reps = 3): number {
  let best = Infinity;
  for (let i = 0; i < reps; i++) {
    const t = cpuMs();
    fn();
    best = Math.min(best, cpuMs() - t);
  }
  return best;
}

const gc = () => (globalThis as { gc?: () => void }).gc?.();

function countingSink(): StreamSink & { bytes: number } {
  const s = {
    kind: 'ws' as const,
    bytes: 0,
    write(t: StreamText) {
      s.bytes += typeof t === 'string' ? t.length : Buffer.isBuffer(t) ? t.length : t.reduce((a, b) => a + b.length, 0);
    },
    keepalive() {},
    caughtUp: () => true,
    kick() {},
    end() {},
    onGone() {},
  };
  return s;
}

export function hubCosts(hostCount: number, batch: number, share: number): void {
  gc();
  const held = () => process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers;
  const heap0 = held();
  const store = new MemoryFleetStore();
  const owners: object[] = [];
  const hosts = Array.from({ length: hostCount }, (_, i) => `c${i}`);
  hosts.forEach((h, i) => {
    owners[i] = {};
    store.hello(h, { transport: 'ws', epoch: EPOCH, collectorVersion: 'bench', actionsAllowed: [] }, owners[i]);
    const rows = Array.from({ length: PANES }, (_, p) => benchRow(h, p, 'working'));
    store.applySnapshot(h, owners[i], { epoch: EPOCH, seq: 0, complete: true, servers: [{ server: SERVER, incarnation: 'i1', rows }] });
  });
  store.documentBytes();
  gc();
  const heapRows = held() - heap0;
  const rows = hostCount * PANES;

  // Frames as a collector sends them: `batch` rows of one host, a share changing state class.
  /** Sequence numbers a frame's text is made with (any will do for decoding) … */
  let textSeq = 0;
  /** … and the ones the store expects, set on a decoded frame just before it is applied. */
  const seqs = new Array<number>(hostCount).fill(0);
  const apply = (host: number, frame: CollectorFrame) => {
    (frame as { seq: number }).seq = ++seqs[host]!;
    const r = store.applyDelta(hosts[host]!, owners[host]!, frame as never);
    if (!r.ok) throw new Error(`bench delta refused: ${r.message}`);
  };
  const states = ['working', 'blocked', 'idle'] as const;
  let cursor = 0;
  const frames = (count: number): { host: number; text: string }[] =>
    Array.from({ length: count }, (_, f) => {
      const k = f % hostCount;
      const seq = ++textSeq;
      const upserts = Array.from({ length: batch }, () => {
        const p = cursor++ % PANES;
        return benchRow(hosts[k]!, p, Math.random() < share ? states[(seq + p) % 3]! : 'working', `t${seq}`, seq);
      });
      return { host: k, text: JSON.stringify({ type: 'delta', epoch: EPOCH, seq, server: SERVER, incarnation: 'i1', upserts, removals: [] }) };
    });

  // Decode: the schema alone (what every frame cost before) against decodeFrame with its fast path.
  const sample = frames(2000 / batch);
  const zodMs = cpuOf(() => {
    for (const f of sample) collectorFrame.safeParse(JSON.parse(f.text));
  });
  const parseMs = cpuOf(() => {
    for (const f of sample) JSON.parse(f.text);
  });
  const fastMs = cpuOf(() => {
    for (const f of sample) decodeFrame(f.text, 'from-collector');
  });
  const per1k = (ms: number, n: number) => ((ms / n) * 1000).toFixed(1);
  const sampleRows = sample.length * batch;
  console.log(
    `decode, CPU ms per 1,000 rows (${batch} rows a frame): JSON.parse alone ${per1k(parseMs, sampleRows)}; + zod schema ${per1k(zodMs, sampleRows)} (before); decodeFrame now ${per1k(fastMs, sampleRows)}`,
  );

  // Apply and flush: feed decoded frames into the store with 50 events + 10 changes readers, one
  // flush per `perFlush` rows (what 50 ms of coalescing gathers at a given rate).
  const metrics = new HubMetrics();
  const streams = new StreamHub(store, { coalesceMs: 1e9, keepaliveMs: 1e9, logger: pino({ level: 'silent' }), metrics });
  const sinks: ReturnType<typeof countingSink>[] = [];
  for (let i = 0; i < 60; i++) {
    streams.add(
      () => {
        const s = countingSink();
        sinks.push(s);
        return s;
      },
      EMPTY_SELECTOR,
      i < 50 ? 'events' : 'changes',
    );
  }
  const flush = () => (streams as unknown as { flush(): void }).flush();
  for (const rate of [1000, 20_000]) {
    const perFlush = Math.max(batch, Math.round(rate / 20));
    const decoded = frames(Math.max(1, Math.round(4000 / batch))).map((f) => ({
      host: f.host,
      frame: (decodeFrame(f.text, 'from-collector') as { ok: true; frame: CollectorFrame }).frame,
    }));
    let applyMs = 0;
    let flushMs = 0;
    let i = 0;
    while (i < decoded.length) {
      const t = cpuMs();
      for (let r = 0; r < perFlush && i < decoded.length; r += batch, i++) {
        const d = decoded[i]!;
        apply(d.host, d.frame);
      }
      const t2 = cpuMs();
      flush();
      const t3 = cpuMs();
      applyMs += t2 - t;
      flushMs += t3 - t2;
    }
    const n = decoded.length * batch;
    console.log(
      `at ${rate} rows/s (${perFlush} rows a flush): store apply ${per1k(applyMs, n)} CPU ms per 1,000 rows; flush to 50 events + 10 changes readers ${per1k(flushMs, n)}`,
    );
  }
  streams.close();

  // A full read right after rows changed, against a bare JSON.stringify of the same rows.
  const plain = JSON.parse(store.documentText()) as { agents: unknown[] };
  const stringifyMs = cpuOf(() => JSON.stringify({ schema: 1, agents: plain.agents }), 5);
  const churn = frames(200).map((f) => ({ host: f.host, frame: (decodeFrame(f.text, 'from-collector') as { ok: true; frame: CollectorFrame }).frame }));
  let c = 0;
  const change50 = () => {
    // 50 ms of changes at 1,000 rows/s, then the read.
    for (let k = 0; k < 50 / batch; k++, c++) {
      const d = churn[c % churn.length]!;
      apply(d.host, d.frame);
    }
  };
  const readMs = cpuOf(() => {
    change50();
    let length = 0;
    for (const p of store.documentParts()) length += p.length;
    if (length === 0) throw new Error('empty document');
  }, 5);
  const bytesMs = cpuOf(() => {
    change50();
    store.documentBytes();
  }, 5);
  const changeMs = cpuOf(change50, 5);
  console.log(
    `/v1/agents body at ${rows} rows after 50 rows changed (the changes' own ${changeMs.toFixed(1)} ms included): as parts (what it sends) ${readMs.toFixed(1)} CPU ms, ` +
      `as one buffer ${bytesMs.toFixed(1)}; bare JSON.stringify of the same rows ${stringifyMs.toFixed(1)} (parts ×${(readMs / stringifyMs).toFixed(2)})`,
  );
  // A read after a second of changes at 1,000 rows/s (fresh frames each time, so every one
  // changes its host): what the read finds to encode if nothing ran before it (as before), and
  // with the hub's warming (FleetStore.prepare) run first, whose own cost is shown apart: the same
  // encoding, done as changes arrive instead of in the read. Best of 5 each.
  const second = () =>
    frames(1000 / batch).map((f) => ({ host: f.host, frame: (decodeFrame(f.text, 'from-collector') as { ok: true; frame: CollectorFrame }).frame }));
  const readParts = () => {
    let length = 0;
    for (const p of store.documentParts()) length += p.length;
    if (length === 0) throw new Error('empty document');
  };
  store.prepare();
  readParts();
  let coldMs = Infinity;
  let warmMs = Infinity;
  let prepareMs = Infinity;
  for (let rep = 0; rep < 5; rep++) {
    let batchOf = second();
    for (const d of batchOf) apply(d.host, d.frame);
    coldMs = Math.min(coldMs, cpuOf(readParts, 1));
    batchOf = second();
    for (const d of batchOf) apply(d.host, d.frame);
    prepareMs = Math.min(
      prepareMs,
      cpuOf(() => store.prepare(), 1),
    );
    warmMs = Math.min(warmMs, cpuOf(readParts, 1));
  }
  console.log(
    `/v1/agents body after 1 s of changes at 1,000 rows/s (${1000 / batch} frames): the read's own CPU ${coldMs.toFixed(1)} ms unwarmed (as before), ${warmMs.toFixed(1)} ms warmed; ` +
      `the warming itself ${prepareMs.toFixed(1)} ms for that second`,
  );
  console.log(
    `memory held for ${rows} rows (heap and buffers): ${(heapRows / 1e6).toFixed(0)} MB (${(heapRows / rows).toFixed(0)} bytes a row; a row's JSON is ${Buffer.byteLength(JSON.stringify(plain.agents[0]))} bytes)`,
  );
}
