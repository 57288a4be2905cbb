// What a full fleet read costs the hub's event loop, and what it costs the reader, for the way
// `GET /v1/agents` writes its parts now (writeParts: a slice per turn, the next once drained)
// beside the way it did before (every part in one corked write), interleaved in the same run.
// Build first, then run:
//   npm run build && node dist/bench/hub-read.js [--reads=15] [--collectors=1000]
// The reader is curl in its own process (its time_total, as a script would see it); a bare
// node:http server answering with the same bytes in one `end` is the floor. While the body goes
// out, a 1 ms timer in the hub's process measures how late it fires: the longest stall is what a
// stream reader would wait behind the read. CPU time of the hub's process per read is printed too.

import { execFile } from 'node:child_process';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeParts } from '../hub/http/parts-response.js';
import { MemoryFleetStore } from '../hub/store/memory-store.js';
import { EPOCH, PANES, SERVER, benchRow, pct } from './hub-load.js';

function flag(name: string, def: number): number {
  const a = process.argv.find((x) => x.startsWith(`--${name}=`));
  return a ? Number(a.slice(name.length + 3)) : def;
}

type Way = 'slices' | 'one write' | 'bare';

function oneCorkedWrite(res: ServerResponse, parts: readonly Buffer[]): void {
  res.cork();
  for (const p of parts) res.write(p);
  res.uncork();
  res.end();
}

function curl(url: string): Promise<number> {
  return new Promise((resolve, reject) =>
    execFile('curl', ['-sS', '--fail', '-o', '/dev/null', '-w', '%{time_total}', url], { timeout: 30_000 }, (err: Error | null, out) =>
      err ? reject(err) : resolve(Number(out) * 1000),
    ),
  );
}

async function main(): Promise<void> {
  const n = flag('collectors', 1000);
  const reads = flag('reads', 15);
  const store = new MemoryFleetStore();
  for (let i = 0; i < n; i++) {
    const host = `c${i}`;
    const owner = {};
    store.hello(host, { transport: 'ws', epoch: EPOCH, collectorVersion: 'bench', actionsAllowed: [] }, owner);
    const rows = Array.from({ length: PANES }, (_, p) => benchRow(host, p, 'working'));
    store.applySnapshot(host, owner, { epoch: EPOCH, seq: 0, complete: true, servers: [{ server: SERVER, incarnation: 'i1', rows }] });
  }
  const parts = store.documentParts();
  const whole = Buffer.concat(parts);
  let way: Way = 'slices';
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': whole.length });
    if (way === 'slices') writeParts(res, parts);
    else if (way === 'one write') oneCorkedWrite(res, parts);
    else res.end(whole);
  });
  server.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;

  const ways: Way[] = ['slices', 'one write', 'bare'];
  const got = new Map<Way, { ms: number[]; stall: number[]; cpu: number[] }>(ways.map((w) => [w, { ms: [], stall: [], cpu: [] }]));
  for (let i = 0; i < reads + 1; i++) {
    for (const w of ways) {
      way = w;
      // A 1 ms timer: how late it fires while the read is served is how long the loop was held.
      let stall = 0;
      let due = performance.now() + 1;
      const timer = setInterval(() => {
        const now = performance.now();
        stall = Math.max(stall, now - due);
        due = now + 1;
      }, 1);
      const c0 = process.cpuUsage();
      const ms = await curl(url);
      const c = process.cpuUsage(c0);
      clearInterval(timer);
      await new Promise((r) => setTimeout(r, 30));
      if (i === 0) continue; // warm-up
      const g = got.get(w)!;
      g.ms.push(ms);
      g.stall.push(stall);
      g.cpu.push((c.user + c.system) / 1000);
    }
  }
  server.close();
  console.log(
    `full read of ${n * PANES} rows (${(whole.length / 1e6).toFixed(1)} MB) by curl, ${reads} reads each way, interleaved; load average ${(
      await import('node:os')
    )
      .loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')}`,
  );
  console.log('way                                  curl p50/p90 ms   hub loop held p50/max ms   hub CPU ms/read p50');
  const label: Record<Way, string> = {
    slices: 'slices (writeParts, now)',
    'one write': 'one corked write (before)',
    bare: 'bare: one end() of a single buffer',
  };
  for (const w of ways) {
    const g = got.get(w)!;
    console.log(
      `${label[w].padEnd(37)}${`${pct(g.ms, 0.5).toFixed(0)}/${pct(g.ms, 0.9).toFixed(0)}`.padStart(15)}   ${`${pct(g.stall, 0.5).toFixed(1)}/${Math.max(...g.stall).toFixed(1)}`.padStart(24)}   ${pct(g.cpu, 0.5).toFixed(1).padStart(19)}`,
    );
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
