// A collector stand-in for hub tests: speaks the wire protocol over a real WebSocket, frame by
// frame, so a test can send exactly the good or bad frames it means to.

import type { IncomingMessage } from 'node:http';
import { WebSocket } from 'ws';
import { PROTOCOL_VERSION } from '../../shared/protocol.js';
import { protocolRowObject, type ProtocolRow } from '../../shared/row.js';

export const EPOCH_A = '0123456789abcdef';
export const EPOCH_B = 'fedcba9876543210';
export const SERVER = '/tmp/tmux-1000/default';

export function protoRow(over: Partial<ProtocolRow> = {}): ProtocolRow {
  return protocolRowObject({
    pane: '%1',
    agent: 'claude',
    state: 'working',
    detail: null,
    since: 1_700_000_000_000,
    since_ms: 1_700_000_000_000,
    episode_ms: 1_700_000_000_000,
    locator: 'main:1.0',
    attention: false,
    done: false,
    session: null,
    transcript: null,
    permission_request: null,
    stamped_at_ms: null,
    context: null,
    context_at_ms: null,
    muted: false,
    tokens: null,
    quota: null,
    cost_usd: null,
    repo: null,
    branch: null,
    worktree: null,
    pending_tool: null,
    pending_call: null,
    pending_summary: null,
    server: SERVER,
    host: 'h',
    ...over,
  });
}

type Frame = Record<string, unknown> & { type: string };

export class FakeCollector {
  readonly received: Frame[] = [];
  closeCode: number | null = null;
  closeReason = '';
  private readonly waiters = new Set<() => void>();

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      this.received.push(JSON.parse(String(data)) as Frame);
      this.wake();
    });
    ws.on('close', (code, reason) => {
      this.closeCode = code;
      this.closeReason = reason.toString();
      this.wake();
    });
  }

  private wake(): void {
    for (const w of [...this.waiters]) w();
  }

  static connect(hubUrl: string, token: string | null): Promise<FakeCollector> {
    return new Promise((resolve, reject) => {
      const headers: Record<string, string> = token === null ? {} : { authorization: `Bearer ${token}` };
      const ws = new WebSocket(`${hubUrl.replace(/^http/, 'ws')}/v1/collect`, { headers });
      const fc = new FakeCollector(ws);
      ws.once('open', () => resolve(fc));
      ws.once('unexpected-response', (_req, res: IncomingMessage) => reject(Object.assign(new Error(`HTTP ${res.statusCode}`), { status: res.statusCode })));
      ws.once('error', reject);
    });
  }

  /** Status of a refused upgrade, or 101 when it was accepted. */
  static async upgradeStatus(hubUrl: string, token: string | null): Promise<number> {
    try {
      const fc = await FakeCollector.connect(hubUrl, token);
      fc.ws.terminate();
      return 101;
    } catch (e) {
      return (e as { status?: number }).status ?? -1;
    }
  }

  sendRaw(text: string): void {
    this.ws.send(text);
  }

  send(frame: Frame): void {
    this.ws.send(JSON.stringify(frame));
  }

  hello(host: string, epoch = EPOCH_A, protocol = PROTOCOL_VERSION, extra: Record<string, unknown> = {}): void {
    this.send({ type: 'hello', protocol, host, collector_version: '0.1.0-test', epoch, actions_allowed: ['approve'], ...extra });
  }

  snapshot(seq: number, rows: ProtocolRow[], o: { epoch?: string; complete?: boolean; server?: string; incarnation?: string } = {}): void {
    this.send({
      type: 'snapshot',
      epoch: o.epoch ?? EPOCH_A,
      seq,
      complete: o.complete ?? true,
      servers: [{ server: o.server ?? SERVER, incarnation: o.incarnation ?? 'inc1', rows }],
    });
  }

  delta(seq: number, upserts: ProtocolRow[], removals: string[] = [], o: { epoch?: string; server?: string; incarnation?: string } = {}): void {
    this.send({
      type: 'delta',
      epoch: o.epoch ?? EPOCH_A,
      seq,
      server: o.server ?? SERVER,
      incarnation: o.incarnation ?? 'inc1',
      upserts,
      removals,
    });
  }

  heartbeat(at = Date.now(), seq?: number): void {
    this.send(seq === undefined ? { type: 'heartbeat', at } : { type: 'heartbeat', at, seq });
  }

  /** Wait for the first received frame (from index `from`) that matches. */
  async next(pred: (f: Frame) => boolean, timeoutMs = 3000, from = 0): Promise<Frame> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const hit = this.received.slice(from).find(pred);
      if (hit) return hit;
      if (Date.now() > deadline) throw new Error(`no matching frame within ${timeoutMs} ms; got ${JSON.stringify(this.received.map((f) => f.type))}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(done, 50);
        const w = () => done();
        function done() {
          clearTimeout(t);
          resolve();
        }
        this.waiters.add(w);
        setTimeout(() => this.waiters.delete(w), 60);
      });
    }
  }

  async closed(timeoutMs = 3000): Promise<{ code: number; reason: string }> {
    const deadline = Date.now() + timeoutMs;
    while (this.closeCode === null) {
      if (Date.now() > deadline) throw new Error('socket did not close');
      await new Promise((r) => setTimeout(r, 20));
    }
    return { code: this.closeCode, reason: this.closeReason };
  }

  close(): void {
    this.ws.close();
  }
}

/** Poll until `check` returns a value (not undefined), or fail after `timeoutMs`. */
export async function until<T>(check: () => T | undefined | Promise<T | undefined>, timeoutMs = 3000, stepMs = 10): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, stepMs));
  }
}
