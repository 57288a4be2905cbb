// The `/v1/agents` side of bench/hub, in a process of its own so that receiving and parsing 11 MB
// never stalls the streams that sample edge latency. Each round reads the fleet document from the
// hub twice, as a lean node:http client that only counts bytes and as curl (what a user's script
// runs), then the same bytes from a bare node:http server in yet another process: that pair is the
// floor the loopback and each client set on this machine, measured at the same moment. The
// JSON.stringify baseline of the target is timed here too, on the rows just read.
// curl reads the hub twice a round, each 250 ms into the updates: once as the hub runs now, once
// with the store's warming turned off (every host changed since the last read encoded by the
// read itself, as before), so the old way's figure stands beside the new one from the same run.

import { execFile, fork, type ChildProcess } from 'node:child_process';
import { writeFileSync, readFileSync, rmSync } from 'node:fs';
import { request, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

interface Read {
  ms: number;
  /** Time to the first byte, where the client tells it. */
  firstMs?: number;
  bytes: number;
  body?: Buffer;
}

/** A GET that only counts the bytes it receives (keeps them when asked); a fresh connection each time. */
function leanGet(url: string, headers: Record<string, string>, keep = false): Promise<Read> {
  return new Promise((resolve, reject) => {
    const t = performance.now();
    const req = request(url, { headers, agent: false }, (res) => {
      let bytes = 0;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => {
        bytes += c.length;
        if (keep) chunks.push(c);
      });
      res.on('end', () => {
        const ms = performance.now() - t;
        if (res.statusCode !== 200) return reject(new Error(`HTTP ${res.statusCode}`));
        resolve({ ms, bytes, ...(keep ? { body: Buffer.concat(chunks) } : {}) });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** curl's own total time (connect to last byte, without its process start-up), as a script would run it. */
function curlGet(url: string, headers: Record<string, string>): Promise<Read> {
  const args = ['-sS', '--fail', '-o', '/dev/null', '-w', '%{time_total} %{size_download} %{time_starttransfer}'];
  for (const [k, v] of Object.entries(headers)) args.push('-H', `${k}: ${v}`);
  return new Promise((resolve, reject) =>
    execFile('curl', [...args, url], { timeout: 30_000 }, (err: Error | null, out) => {
      if (err) return reject(err);
      const [secs, size, first] = out.trim().split(' ').map(Number);
      resolve({ ms: secs! * 1000, bytes: size!, firstMs: first! * 1000 });
    }),
  );
}

/** A node:http server that answers every request with one file's bytes, in one `end`. */
export function bareServer(file: string): void {
  const body = readFileSync(file);
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
    res.end(body);
  });
  server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as AddressInfo).port }));
  process.on('disconnect', () => process.exit(0));
}

export interface AgentsReport {
  /** Lean node:http reads of the hub. */
  lean: number[];
  /** curl reads of the hub. */
  curl: number[];
  /** Their first byte (curl's time_starttransfer): what the hub did before writing. */
  curlFirst: number[];
  /** curl reads of the hub with its pieces left unwarmed (FleetStore.prepare off), as reads went before. */
  curlOld: number[];
  curlOldFirst: number[];
  /** JSON.stringify of the rows read. */
  stringify: number[];
  /** The same bytes from a bare node:http server in another process: lean client, then curl. */
  floorLean: number[];
  floorCurl: number[];
  bytes: number;
  failed: number;
  /** When the last read ended (epoch ms). */
  endedAt: number;
}

/** Updates that flow between turning warming on or off and the read: what the read finds undone. */
const SPELL_MS = 250;

/** Ask the hub's process to turn the warming of its pieces on or off, and wait until it has. */
function warming(on: boolean): Promise<void> {
  return new Promise((resolve) => {
    const ack = (m: { warmingAck?: boolean }): void => {
      if (m.warmingAck === undefined) return;
      process.off('message', ack);
      resolve();
    };
    process.on('message', ack);
    process.send!({ warming: on });
  });
}

export async function reader(me: string, url: string, token: string): Promise<void> {
  const auth = { authorization: `Bearer ${token}` };
  const file = join(tmpdir(), `tma-bench-agents-${process.pid}.json`);
  let bare: ChildProcess | null = null;
  const startBare = async (): Promise<number> => {
    bare?.kill();
    bare = fork(me, ['--bare', file], { stdio: 'inherit', execArgv: [] });
    const m = await new Promise<{ port: number }>((r) => bare!.once('message', (x) => r(x as { port: number })));
    return m.port;
  };
  process.on('exit', () => {
    bare?.kill();
    rmSync(file, { force: true });
  });
  process.send!({ ready: true });
  // eslint-disable-next-line @typescript-eslint/no-misused-promises -- a bench child: a rejection that ends it is the wanted failure
  process.on('message', async (m: { cmd: string; rounds?: number }) => {
    if (m.cmd !== 'agents') return;
    const r: AgentsReport = {
      lean: [],
      curl: [],
      curlFirst: [],
      curlOld: [],
      curlOldFirst: [],
      stringify: [],
      floorLean: [],
      floorCurl: [],
      bytes: 0,
      failed: 0,
      endedAt: 0,
    };
    let barePort = 0;
    let body: Buffer | null = null;
    for (let i = 0; i < (m.rounds ?? 3); i++) {
      await new Promise((res) => setTimeout(res, 40));
      try {
        const first = await leanGet(`${url}/v1/agents`, auth, i === 0);
        r.lean.push(first.ms);
        r.bytes = first.bytes;
        if (first.body) {
          // The floor serves this very body.
          body = first.body;
          writeFileSync(file, body);
          barePort = await startBare();
          // The bare server holds the bytes now; the file would outlive a reader that is killed.
          rmSync(file, { force: true });
        }
        // With and without the hub's warming, each after the same spell of updates, the order
        // alternating by round so neither always goes first.
        for (const on of i % 2 === 0 ? [true, false] : [false, true]) {
          await warming(on);
          await new Promise((res) => setTimeout(res, SPELL_MS));
          const c = await curlGet(`${url}/v1/agents`, auth);
          (on ? r.curl : r.curlOld).push(c.ms);
          (on ? r.curlFirst : r.curlOldFirst).push(c.firstMs!);
        }
        await warming(true);
        const bareUrl = `http://127.0.0.1:${barePort}/`;
        r.floorLean.push((await leanGet(bareUrl, {})).ms);
        r.floorCurl.push((await curlGet(bareUrl, {})).ms);
      } catch {
        // A loaded machine can lose a request to a socket race; the figures are the ones that completed.
        r.failed++;
      }
    }
    r.endedAt = Date.now();
    bare?.kill();
    bare = null;
    // Parsed and stringified after the reads, so the parse never delays one of them.
    if (body) {
      const agents = (JSON.parse(body.toString('utf8')) as { agents: unknown[] }).agents;
      for (let k = 0; k < 3; k++) {
        const t = performance.now();
        JSON.stringify({ schema: 1, agents });
        r.stringify.push(performance.now() - t);
      }
    }
    process.send!(r);
  });
}
