// The quick status's read asked of the running collector (collector/fleet/quick-read.ts): the
// answer's codec with its key set pinned, the collector's side (bounded reads, NAK on a tmux
// failure), and the client's decisions against real unix sockets that answer right, refuse,
// answer garbage, answer too much, or never answer; every miss must come back in bounded time.

import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SETTLED_READ } from '../../collector/engine/settled-read.js';
import {
  askQuickRead,
  decodeQuickRead,
  encodeQuickRead,
  MAX_QUICK_READS_IN_FLIGHT,
  QUICK_READ_DEADLINE_MS,
  quickReader,
} from '../../collector/fleet/quick-read.js';
import { listenWake, NAK, QUICK_READ_LINE, type WakeListener } from '../../collector/fleet/wake.js';

const OUTS = ['%1\u001fa\u001fb\n%2\u001fc\n', '1700000000\n', '1700000001000\n', '/tmp/tmux-0/x\u001f42\u001f1700000000\n', ''];

describe('answer codec', () => {
  it('is one line of JSON with exactly the keys schema, outs (pinned)', () => {
    const line = encodeQuickRead(OUTS);
    expect(line.endsWith('\n')).toBe(true);
    expect(line.slice(0, -1)).not.toContain('\n');
    const doc = JSON.parse(line) as Record<string, unknown>;
    expect(Object.keys(doc)).toEqual(['schema', 'outs']);
    expect(doc.schema).toBe(1);
    expect(decodeQuickRead(line.slice(0, -1))).toEqual(OUTS);
    expect(OUTS).toHaveLength(SETTLED_READ.length);
  });

  it('takes nothing but a whole, well-typed answer', () => {
    const ok = { schema: 1, outs: OUTS };
    for (const bad of [
      'not json',
      '[]',
      'null',
      JSON.stringify({ ...ok, schema: 2 }),
      JSON.stringify({ outs: OUTS, schema: 1 }),
      JSON.stringify({ ...ok, extra: true }),
      JSON.stringify({ schema: 1 }),
      JSON.stringify({ schema: 1, outs: OUTS.slice(1) }),
      JSON.stringify({ schema: 1, outs: [...OUTS.slice(1), 5] }),
      JSON.stringify({ schema: 1, outs: 'x' }),
    ]) {
      expect(decodeQuickRead(bad), bad).toBeNull();
    }
  });
});

describe('the collector side', () => {
  it('runs SETTLED_READ on the runner it is given and answers its outputs', async () => {
    const asked: string[][][] = [];
    const read = quickReader({ runChain: async (cmds) => (asked.push(cmds), OUTS) });
    expect(await read()).toBe(encodeQuickRead(OUTS));
    expect(asked).toEqual([SETTLED_READ]);
  });

  it('refuses when tmux fails, and past MAX_QUICK_READS_IN_FLIGHT reads at once', async () => {
    expect(await quickReader({ runChain: () => Promise.reject(new Error('server gone')) })()).toBeNull();
    const release: (() => void)[] = [];
    const read = quickReader({ runChain: () => new Promise((r) => release.push(() => r(OUTS))) });
    const running = Array.from({ length: MAX_QUICK_READS_IN_FLIGHT }, () => read());
    expect(await read()).toBeNull();
    await new Promise((r) => setImmediate(r));
    expect(release).toHaveLength(MAX_QUICK_READS_IN_FLIGHT);
    for (const r of release) r();
    expect(await Promise.all(running)).toEqual(running.map(() => encodeQuickRead(OUTS)));
    // Finished reads free their places.
    const again = read();
    await new Promise((r) => setImmediate(r));
    expect(release).toHaveLength(MAX_QUICK_READS_IN_FLIGHT + 1);
    release.at(-1)!();
    expect(await again).toBe(encodeQuickRead(OUTS));
  });
});

describe('the client', () => {
  let dir = '';
  const servers: Server[] = [];
  const listeners: WakeListener[] = [];
  const sockets: Socket[] = [];
  const path = () => {
    dir ||= mkdtempSync(join(tmpdir(), 'tma-quick-read-'));
    return join(dir, `s${servers.length + listeners.length}.sock`);
  };
  afterEach(async () => {
    for (const s of sockets.splice(0)) s.destroy();
    for (const l of listeners.splice(0)) l.close();
    await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = '';
  });

  /** A unix socket whose every connection gets `onRequest(line, socket)` once a line arrived. */
  async function fake(onRequest: (line: string, s: Socket) => void): Promise<string> {
    const p = path();
    const server = createServer((s) => {
      sockets.push(s);
      let got = '';
      s.on('data', (d) => {
        got += d.toString('latin1');
        const nl = got.indexOf('\n');
        if (nl >= 0) onRequest(got.slice(0, nl), s);
      });
      s.on('error', () => undefined);
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(p, r));
    return p;
  }

  it('gets the outputs from a collector that answers, over the real wake listener', async () => {
    const p = path();
    const l = await listenWake(p, () => undefined, { quickRead: quickReader({ runChain: async () => OUTS }) });
    listeners.push(l!);
    expect(await askQuickRead(p)).toEqual({ ok: true, outs: OUTS });
  });

  it('sends exactly the request line', async () => {
    const lines: string[] = [];
    const p = await fake((line, s) => {
      lines.push(line);
      s.end(encodeQuickRead(OUTS));
    });
    expect(await askQuickRead(p)).toEqual({ ok: true, outs: OUTS });
    expect(lines).toEqual([QUICK_READ_LINE]);
  });

  it('takes an answer split over many writes', async () => {
    const p = await fake((_, s) => {
      const text = encodeQuickRead(OUTS);
      let i = 0;
      const step = () => {
        if (i >= text.length) return s.end();
        s.write(text.slice(i, i + 7));
        i += 7;
        setTimeout(step, 1);
      };
      step();
    });
    expect(await askQuickRead(p, 5000)).toEqual({ ok: true, outs: OUTS });
  });

  it('reports a missing socket, a refusal (NAK, or a listener without the read) and garbage as misses', async () => {
    expect(await askQuickRead(join(path(), 'none.sock'))).toEqual({ ok: false, why: 'absent' });
    expect(await askQuickRead(await fake((_, s) => s.end(Buffer.from([NAK]))))).toEqual({ ok: false, why: 'refused' });
    const older = path();
    listeners.push((await listenWake(older, () => undefined))!);
    expect(await askQuickRead(older)).toEqual({ ok: false, why: 'refused' });
    expect(await askQuickRead(await fake((_, s) => s.end('HTTP/1.1 400\r\n\r\n')))).toEqual({ ok: false, why: 'malformed' });
    expect(await askQuickRead(await fake((_, s) => s.end('{"schema":1,"outs":[]}\n')))).toEqual({ ok: false, why: 'malformed' });
    // A document cut short by the collector closing is not an answer either.
    expect(await askQuickRead(await fake((_, s) => s.end(encodeQuickRead(OUTS).slice(0, 20))))).toEqual({ ok: false, why: 'malformed' });
    expect(await askQuickRead(await fake((_, s) => s.end()))).toEqual({ ok: false, why: 'malformed' });
  });

  it('does not ask through a folder others can enter (someone else may have made it first)', async () => {
    const p = await fake((_, s) => s.end(encodeQuickRead(OUTS)));
    chmodSync(dir, 0o755);
    expect(await askQuickRead(p)).toEqual({ ok: false, why: 'absent' });
    chmodSync(dir, 0o700);
    expect(await askQuickRead(p)).toEqual({ ok: true, outs: OUTS });
  });

  it('gives up at its deadline on a collector that accepts and never answers, or never ends its line', async () => {
    for (const hang of [() => undefined, (_: string, s: Socket) => s.write('{"schema":1,"outs":[')]) {
      const p = await fake(hang);
      const t0 = performance.now();
      expect(await askQuickRead(p)).toEqual({ ok: false, why: 'timeout' });
      const took = performance.now() - t0;
      expect(took).toBeGreaterThanOrEqual(QUICK_READ_DEADLINE_MS - 5);
      expect(took).toBeLessThan(QUICK_READ_DEADLINE_MS + 2000);
    }
  });

  it('stops reading an answer that grows past its cap', async () => {
    const p = await fake((_, s) => {
      const junk = Buffer.alloc(1 << 20, 0x61);
      s.write('{"schema":1,"outs":["');
      const pump = () => {
        while (!s.destroyed && s.write(junk));
        if (!s.destroyed) s.once('drain', pump);
      };
      pump();
    });
    const a = await askQuickRead(p, 30_000);
    expect(a).toEqual({ ok: false, why: 'malformed' });
  });
});
