import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { backoffDelay } from '../../shared/backoff.js';
import { diffRows, packBySize, splitDelta, splitSnapshot, viewOf } from '../../collector/fleet/frame-split.js';
import { Publisher, type PublisherOptions } from '../../collector/fleet/publisher.js';
import { FrameRing } from '../../collector/fleet/ring.js';
import { collectUrl } from '../../collector/fleet/ws-link.js';
import { linkPair, type FrameLink } from '../../shared/link.js';
import { decodeFrame, DEAD_AFTER_HEARTBEATS, type CollectorFrame, type ServerState } from '../../shared/protocol.js';
import { protocolRowObject, type AgentRow, type ProtocolRow } from '../../shared/row.js';

const EPOCH = '0123456789abcdef0123456789abcdef';
const SRV = '/tmp/tmux-0/default';

function agentRow(pane: string, state: AgentRow['state'] = 'idle', extra: Partial<AgentRow> = {}): AgentRow {
  return {
    pane,
    agent: 'claude',
    state,
    detail: null,
    since: 1000,
    since_ms: 1000,
    episode_ms: 1000,
    locator: 'main:0.0',
    title: 'SECRET TITLE',
    attention: false,
    done: false,
    session: null,
    transcript: null,
    permission_request: null,
    stamped_at_ms: 1000,
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
    server: SRV,
    host: 'box',
    ...extra,
  };
}

/** Rows as an engine hands them over: local rows, title included; the publisher must strip it. */
const rows = (...r: AgentRow[]) => r as unknown as ProtocolRow[];

interface Harness {
  pub: Publisher;
  hub: FrameLink;
  got: CollectorFrame[];
  closed: string[];
  say(frame: object): Promise<void>;
  settle(): Promise<void>;
  take(): CollectorFrame[];
}

function harness(opts: Partial<PublisherOptions> = {}): Harness {
  const pub = new Publisher({ host: 'box', version: '9.9.9', epoch: EPOCH, allowedActions: ['approve'], now: () => Date.now(), heartbeatMs: 1000, ...opts });
  const [mine, hub] = linkPair();
  const got: CollectorFrame[] = [];
  const closed: string[] = [];
  hub.onMessage((t) => {
    const d = decodeFrame<CollectorFrame>(t, 'from-collector');
    if (!d.ok) throw new Error(`collector sent an invalid frame: ${d.error.message}`);
    got.push(d.frame);
  });
  hub.onClose((r) => closed.push(r));
  pub.attach(mine);
  const settle = () => vi.advanceTimersByTimeAsync(0).then(() => undefined);
  return {
    pub,
    hub,
    got,
    closed,
    settle,
    async say(frame) {
      hub.send(JSON.stringify(frame));
      await settle();
    },
    take: () => got.splice(0),
  };
}

const welcome = (resume_from: number | null) => ({ type: 'welcome', protocol: 1, resume_from });

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('hello and first sync', () => {
  it('says hello with host, version, epoch and allowed actions as soon as it is attached', async () => {
    const h = harness();
    await h.settle();
    expect(h.take()).toEqual([
      {
        type: 'hello',
        protocol: 1,
        host: 'box',
        collector_version: '9.9.9',
        epoch: EPOCH,
        actions_allowed: ['approve'],
        at: expect.any(Number),
        share_prompt: true,
      },
    ]);
    // A host that keeps its prompts says so, so a hub can say "not shared by this host".
    const off = harness({ sharePrompt: false });
    await off.settle();
    expect(off.take()[0]).toMatchObject({ type: 'hello', share_prompt: false });
  });

  it('holds a welcome until the engines are ready, then sends a complete, title-free snapshot', async () => {
    const h = harness();
    h.pub.update(SRV, 'inc-1', rows(agentRow('%1'), agentRow('%2', 'working')));
    await h.say(welcome(null));
    expect(h.take().map((f) => f.type)).toEqual(['hello']);
    h.pub.markReady();
    await h.settle();
    const [snap, ...rest] = h.take();
    expect(rest).toEqual([]);
    expect(snap).toEqual({
      type: 'snapshot',
      epoch: EPOCH,
      seq: 0,
      complete: true,
      servers: [{ server: SRV, incarnation: 'inc-1', rows: [protocolRowObject(agentRow('%1')), protocolRowObject(agentRow('%2', 'working'))] }],
    });
    expect(JSON.stringify(snap)).not.toContain('SECRET TITLE');
    expect(JSON.stringify(snap)).not.toContain('"title"');
  });

  it('changes made before ready are in the snapshot, not in deltas', async () => {
    const h = harness();
    h.pub.update(SRV, 'inc-1', rows(agentRow('%1')));
    h.pub.update(SRV, 'inc-1', rows(agentRow('%1', 'blocked')));
    h.pub.markReady();
    await h.say(welcome(null));
    const frames = h.take().slice(1);
    expect(frames.map((f) => f.type)).toEqual(['snapshot']);
    expect(h.pub.seq).toBe(0);
    expect(frames[0]!.type === 'snapshot' && frames[0].servers[0]!.rows[0]!.state).toBe('blocked');
  });

  it('an empty collector still sends one complete snapshot frame', async () => {
    const h = harness();
    h.pub.markReady();
    await h.say(welcome(null));
    expect(h.take().slice(1)).toEqual([{ type: 'snapshot', epoch: EPOCH, seq: 0, servers: [], complete: true }]);
  });

  it('closes the link when the hub speaks another protocol version', async () => {
    const h = harness();
    h.pub.markReady();
    await h.say({ type: 'welcome', protocol: 2, resume_from: null });
    expect(h.closed).toEqual(['protocol mismatch']);
    expect(h.take().map((f) => f.type)).toEqual(['hello']);
  });
});

describe('deltas and server events', () => {
  async function live(): Promise<Harness> {
    const h = harness();
    h.pub.update(SRV, 'inc-1', rows(agentRow('%1'), agentRow('%2')));
    h.pub.markReady();
    await h.say(welcome(null));
    h.take();
    return h;
  }

  it('sends nothing when no row changed', async () => {
    const h = await live();
    h.pub.update(SRV, 'inc-1', rows(agentRow('%2'), agentRow('%1')));
    await h.settle();
    expect(h.take()).toEqual([]);
    expect(h.pub.seq).toBe(0);
  });

  it('a title-only change is not a change on the wire', async () => {
    const h = await live();
    h.pub.update(SRV, 'inc-1', rows(agentRow('%1', 'idle', { title: 'other' }), agentRow('%2')));
    await h.settle();
    expect(h.take()).toEqual([]);
  });

  it('upserts exactly the rows whose JSON changed and removes panes that left, one seq each', async () => {
    const h = await live();
    h.pub.update(SRV, 'inc-1', rows(agentRow('%1', 'working'), agentRow('%3')));
    await h.settle();
    expect(h.take()).toEqual([
      {
        type: 'delta',
        epoch: EPOCH,
        seq: 1,
        server: SRV,
        incarnation: 'inc-1',
        upserts: [protocolRowObject(agentRow('%1', 'working')), protocolRowObject(agentRow('%3'))],
        removals: ['%2'],
      },
    ]);
    h.pub.update(SRV, 'inc-1', rows(agentRow('%1', 'working'), agentRow('%3', 'idle', { attention: true })));
    await h.settle();
    const [d] = h.take();
    expect(d).toMatchObject({ type: 'delta', seq: 2, removals: [] });
    expect(d!.type === 'delta' && d.upserts.map((r) => r.pane)).toEqual(['%3']);
  });

  it('announces a new server, a new incarnation (with all its rows) and a server that went away', async () => {
    const h = await live();
    const other = '/tmp/tmux-0/other';
    h.pub.update(other, 'o-1', rows(agentRow('%7', 'idle', { server: other })));
    h.pub.update(SRV, 'inc-2', rows(agentRow('%1')));
    h.pub.gone(other);
    h.pub.gone('/never/seen');
    await h.settle();
    const f = h.take();
    expect(f.map((x) => [x.type, 'event' in x ? x.event : '', 'seq' in x ? x.seq : -1])).toEqual([
      ['server', 'appeared', 1],
      ['delta', '', 2],
      ['server', 'incarnation', 3],
      ['delta', '', 4],
      ['server', 'gone', 5],
    ]);
    expect(f[2]).toEqual({ type: 'server', epoch: EPOCH, seq: 3, event: 'incarnation', server: SRV, incarnation: 'inc-2' });
    expect(f[3]!.type === 'delta' && f[3].upserts.map((r) => r.pane)).toEqual(['%1']);
    expect(f[4]).toEqual({ type: 'server', epoch: EPOCH, seq: 5, event: 'gone', server: other, incarnation: 'o-1' });
    expect(h.pub.state().map((s) => s.server)).toEqual([SRV]);
  });
});

describe('resume', () => {
  /** A hub that saw seq 0..n, then the link dropped, then changes happened while away. */
  async function reconnect(opts: Partial<PublisherOptions>, changesWhileAway: number) {
    const h = harness(opts);
    h.pub.update(SRV, 'inc-1', rows(agentRow('%1')));
    h.pub.markReady();
    await h.say(welcome(null));
    h.pub.update(SRV, 'inc-1', rows(agentRow('%1', 'working')));
    await h.settle();
    const seen = h.take().at(-1)!;
    h.hub.close('hub restarted');
    const states = ['idle', 'blocked', 'working', 'unknown'] as const;
    for (let i = 0; i < changesWhileAway; i++) h.pub.update(SRV, 'inc-1', rows(agentRow('%1', states[i % 4])));
    const [mine, hub] = linkPair();
    const got: CollectorFrame[] = [];
    hub.onMessage((t) => got.push(JSON.parse(t) as CollectorFrame));
    h.pub.attach(mine);
    await h.settle();
    const say = async (f: object) => {
      hub.send(JSON.stringify(f));
      await h.settle();
    };
    return { pub: h.pub, got, say, seenSeq: (seen as { seq: number }).seq };
  }

  it('replays exactly the frames after resume_from, on the same epoch, without a snapshot', async () => {
    const r = await reconnect({}, 3);
    expect(r.seenSeq).toBe(1);
    expect(r.got.map((f) => f.type)).toEqual(['hello']);
    expect(r.got[0]).toMatchObject({ epoch: EPOCH });
    await r.say(welcome(1));
    const replay = r.got.slice(1);
    expect(replay.map((f) => [f.type, (f as { seq: number }).seq])).toEqual([
      ['delta', 2],
      ['delta', 3],
      ['delta', 4],
    ]);
    expect(replay.map((f) => (f.type === 'delta' ? f.upserts[0]!.state : ''))).toEqual(['idle', 'blocked', 'working']);
    // Live again: the next change follows on.
    r.pub.update(SRV, 'inc-1', rows(agentRow('%9')));
    await vi.advanceTimersByTimeAsync(0);
    expect(r.got.at(-1)).toMatchObject({ type: 'delta', seq: 5, removals: ['%1'] });
  });

  it('sends nothing more when the hub already has the last seq', async () => {
    const r = await reconnect({}, 0);
    await r.say(welcome(1));
    expect(r.got.map((f) => f.type)).toEqual(['hello']);
  });

  it('replays when the ring still holds the first missing frame, and snapshots when it does not', async () => {
    // Ring of 3: after seqs 1..4 it holds 2..4.
    const held = await reconnect({ ringFrames: 3 }, 3);
    await held.say(welcome(1));
    expect(held.got.slice(1).map((f) => f.type)).toEqual(['delta', 'delta', 'delta']);

    const lost = await reconnect({ ringFrames: 2 }, 3);
    await lost.say(welcome(1));
    expect(lost.got.slice(1)).toEqual([
      {
        type: 'snapshot',
        epoch: EPOCH,
        seq: 4,
        complete: true,
        servers: [{ server: SRV, incarnation: 'inc-1', rows: [protocolRowObject(agentRow('%1', 'working'))] }],
      },
    ]);
  });

  it('snapshots for resume_from null, from the future, or from before anything the ring holds', async () => {
    for (const from of [null, 5, 0]) {
      const r = await reconnect({ ringFrames: 3 }, 3);
      await r.say(welcome(from));
      expect(r.got.slice(1).map((f) => f.type)).toEqual(['snapshot']);
    }
  });

  it('does not send live frames on a new link before its welcome', async () => {
    const r = await reconnect({}, 0);
    r.pub.update(SRV, 'inc-1', rows(agentRow('%1', 'blocked')));
    await vi.advanceTimersByTimeAsync(0);
    expect(r.got.map((f) => f.type)).toEqual(['hello']);
    await r.say(welcome(1));
    expect(r.got.slice(1).map((f) => [f.type, (f as { seq: number }).seq])).toEqual([['delta', 2]]);
  });
});

describe('heartbeats and a silent hub', () => {
  it('sends a heartbeat with the last seq every interval', async () => {
    const h = harness();
    await h.settle();
    h.take();
    await vi.advanceTimersByTimeAsync(999);
    expect(h.take()).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(h.take()).toEqual([{ type: 'heartbeat', at: Date.now(), seq: 0 }]);
  });

  it('drops the link after exactly three silent intervals, not before', async () => {
    expect(DEAD_AFTER_HEARTBEATS).toBe(3);
    const h = harness();
    await vi.advanceTimersByTimeAsync(2999);
    expect(h.closed).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(h.closed).toEqual(['hub silent']);
  });

  it('anything from the hub counts as a sign of life', async () => {
    const h = harness();
    await vi.advanceTimersByTimeAsync(2500);
    await h.say({ type: 'heartbeat', at: 1 });
    await vi.advanceTimersByTimeAsync(2500);
    expect(h.closed).toEqual([]);
    await vi.advanceTimersByTimeAsync(500);
    expect(h.closed).toEqual(['hub silent']);
  });
});

describe('what the hub sends', () => {
  const act = {
    type: 'act',
    id: 'a1',
    action: 'approve',
    server: SRV,
    pane: '%1',
    expect_episode_ms: 5,
    expect_permission_request: null,
    slot: 's1',
    principal: 'op',
    deadline_ms: 9,
  };

  it('answers act with not-supported when no broker is wired', async () => {
    const h = harness();
    await h.say(act);
    expect(h.take().at(-1)).toEqual({
      type: 'act_result',
      id: 'a1',
      result: { schema: 1, action: 'approve', pane: '%1', outcome: 'error', exit_code: 1, reason: 'not-supported', host: 'box', server: SRV },
    });
  });

  it("answers act with the broker's result, or internal when the broker throws", async () => {
    const ok = harness({
      onAct: async (r) => ({ schema: 1, action: r.action, pane: r.pane, outcome: 'sent', exit_code: 0, reason: null, host: 'box', server: r.server }),
    });
    await ok.say(act);
    expect(ok.take().at(-1)).toMatchObject({ type: 'act_result', id: 'a1', result: { outcome: 'sent', exit_code: 0 } });
    const bad = harness({ onAct: async () => Promise.reject(new Error('boom')) });
    await bad.say(act);
    expect(bad.take().at(-1)).toMatchObject({ type: 'act_result', result: { outcome: 'error', reason: 'internal', exit_code: 1 } });
  });

  it('answers a malformed frame with an error frame and keeps the link', async () => {
    const h = harness();
    await h.settle();
    h.take();
    h.hub.send('{nope');
    await h.settle();
    await h.say({ type: 'welcome', protocol: 1 });
    expect(h.take().map((f) => (f.type === 'error' ? f.code : f.type))).toEqual(['bad-json', 'bad-frame']);
    expect(h.closed).toEqual([]);
  });
});

describe('frame splitting', () => {
  const bytes = (o: unknown) => Buffer.byteLength(JSON.stringify(o));

  it('packs greedily and never leaves an item out', () => {
    expect(packBySize([3, 3, 3], (n) => n, 8)).toEqual([[3, 3], [3]]);
    expect(packBySize([3, 3, 3], (n) => n, 7)).toEqual([[3], [3], [3]]);
    expect(packBySize([3, 3], (n) => n, 9)).toEqual([[3, 3]]);
    expect(packBySize([20], (n) => n, 8)).toEqual([[20]]);
    expect(packBySize([], (n: number) => n, 8)).toEqual([]);
  });

  it('splits a large snapshot into frames under the limit whose union is every row', () => {
    const many = Array.from({ length: 40 }, (_, i) => protocolRowObject(agentRow(`%${i}`)));
    const servers: ServerState[] = [
      { server: SRV, incarnation: 'a', rows: many.slice(0, 30) },
      { server: '/s/empty', incarnation: 'b', rows: [] },
      { server: '/s/two', incarnation: 'c', rows: many.slice(30) },
    ];
    const limit = 4000;
    const parts = splitSnapshot(servers, EPOCH, limit);
    expect(parts.length).toBeGreaterThan(3);
    for (const servers of parts) {
      const frame = { type: 'snapshot', epoch: EPOCH, seq: 123, servers, complete: false };
      expect(bytes(frame)).toBeLessThanOrEqual(limit);
    }
    const flat = parts.flat();
    expect(flat.filter((s) => s.server === SRV).flatMap((s) => s.rows)).toEqual(many.slice(0, 30));
    expect(flat.filter((s) => s.server === '/s/two').flatMap((s) => s.rows)).toEqual(many.slice(30));
    expect(flat.filter((s) => s.server === '/s/empty')).toEqual([{ server: '/s/empty', incarnation: 'b', rows: [] }]);
  });

  it('does not split a snapshot that fits exactly, and does one byte over', () => {
    const servers: ServerState[] = [{ server: SRV, incarnation: 'a', rows: [protocolRowObject(agentRow('%1')), protocolRowObject(agentRow('%2'))] }];
    const exact = bytes({ type: 'snapshot', epoch: EPOCH, seq: Number.MAX_SAFE_INTEGER, servers, complete: false });
    expect(splitSnapshot(servers, EPOCH, exact)).toHaveLength(1);
    expect(splitSnapshot(servers, EPOCH, exact - 1)).toHaveLength(2);
  });

  it('the publisher marks only the last snapshot frame complete, all with the same seq', async () => {
    const h = harness({ maxFrameBytes: 3000 });
    h.pub.update(SRV, 'a', rows(...Array.from({ length: 12 }, (_, i) => agentRow(`%${i}`))));
    h.pub.markReady();
    await h.say(welcome(null));
    const snaps = h.take().slice(1);
    expect(snaps.length).toBeGreaterThan(1);
    expect(snaps.map((f) => f.type === 'snapshot' && f.complete)).toEqual([...snaps.slice(1).map(() => false), true]);
    expect(new Set(snaps.map((f) => (f as { seq: number }).seq))).toEqual(new Set([0]));
  });

  it('splits a large delta into several frames, each with its own seq', async () => {
    const body = {
      server: SRV,
      incarnation: 'a',
      upserts: Array.from({ length: 10 }, (_, i) => protocolRowObject(agentRow(`%${i}`))),
      removals: ['%50', '%51'],
    };
    const parts = splitDelta(body, EPOCH, 3000);
    expect(parts.length).toBeGreaterThan(1);
    expect(parts.flatMap((p) => p.upserts)).toEqual(body.upserts);
    expect(parts.flatMap((p) => p.removals)).toEqual(body.removals);
    expect(splitDelta({ ...body, upserts: [], removals: [] }, EPOCH)).toEqual([]);

    const h = harness({ maxFrameBytes: 3000 });
    h.pub.markReady();
    await h.say(welcome(null));
    h.take();
    h.pub.update(SRV, 'a', rows(...Array.from({ length: 10 }, (_, i) => agentRow(`%${i}`))));
    await h.settle();
    const f = h.take();
    expect(f[0]).toMatchObject({ type: 'server', seq: 1 });
    expect(f.slice(1).map((x) => (x as { seq: number }).seq)).toEqual(f.slice(1).map((_, i) => i + 2));
    expect(f.length).toBeGreaterThan(2);
  });

  it('diffs by JSON text', () => {
    const prev = viewOf([protocolRowObject(agentRow('%1')), protocolRowObject(agentRow('%2'))]);
    const d = diffRows(prev, [protocolRowObject(agentRow('%1', 'idle', { muted: true }))]);
    expect(d.upserts.map((r) => r.pane)).toEqual(['%1']);
    expect(d.removals).toEqual(['%2']);
    expect([...d.next.keys()]).toEqual(['%1']);
  });
});

describe('ring', () => {
  it('answers since() at, under and over what it holds', () => {
    const ring = new FrameRing(3);
    for (let s = 1; s <= 5; s++) ring.push(s, `f${s}`);
    expect(ring.since(5, 5)).toEqual([]);
    expect(ring.since(2, 5)).toEqual(['f3', 'f4', 'f5']);
    expect(ring.since(1, 5)).toBeNull();
    expect(ring.since(4, 5)).toEqual(['f5']);
    expect(ring.since(6, 5)).toBeNull();
    expect(ring.since(-1, 5)).toBeNull();
  });

  it('drops the oldest frames past its byte bound but keeps the newest', () => {
    const ring = new FrameRing(100, 10);
    ring.push(1, 'aaaa');
    ring.push(2, 'bbbb');
    expect(ring.since(0, 2)).toEqual(['aaaa', 'bbbb']);
    ring.push(3, 'cccc');
    expect(ring.since(0, 3)).toBeNull();
    expect(ring.since(1, 3)).toEqual(['bbbb', 'cccc']);
    ring.push(4, 'x'.repeat(50));
    expect(ring.since(3, 4)).toEqual(['x'.repeat(50)]);
  });

  it('an empty ring can only answer "nothing missed"', () => {
    const ring = new FrameRing();
    expect(ring.since(0, 0)).toEqual([]);
    expect(ring.since(0, 1)).toBeNull();
  });
});

describe('reconnect backoff and hub URL', () => {
  it('grows exponentially to the cap, jittered over the whole range', () => {
    const p = { baseMs: 500, capMs: 30_000 };
    const top = (a: number) => backoffDelay(a, p, () => 0.999999);
    expect([0, 1, 2, 3, 5, 6, 7, 40].map(top)).toEqual([499, 999, 1999, 3999, 15999, 29999, 29999, 29999]);
    expect(backoffDelay(3, p, () => 0)).toBe(0);
    expect(backoffDelay(3, p, () => 0.5)).toBe(2000);
  });

  it('adds /v1/collect when the hub URL has no path, keeps any other path', () => {
    expect(collectUrl('ws://127.0.0.1:8080')).toBe('ws://127.0.0.1:8080/v1/collect');
    expect(collectUrl('ws://127.0.0.1:8080/')).toBe('ws://127.0.0.1:8080/v1/collect');
    expect(collectUrl('wss://hub.example:443/v1/collect')).toBe('wss://hub.example/v1/collect');
    expect(collectUrl('ws://h:1/custom/path')).toBe('ws://h:1/custom/path');
    expect(() => collectUrl('http://h:1')).toThrow(/ws:\/\//);
    expect(() => collectUrl('not a url')).toThrow(/not a URL/);
  });
});

describe('what never leaves the host', () => {
  it('session ids, transcript paths and agent-printed text are cleared before framing, with the title', async () => {
    const h = harness({ sharePrompt: false });
    h.pub.update(
      SRV,
      'inc1',
      rows(agentRow('%1', 'blocked', { session: 'resume-me', transcript: '/home/u/t.jsonl', pending_call: 'rm -rf x', pending_summary: 'delete' })),
    );
    h.pub.markReady();
    await h.say({ type: 'welcome', protocol: 1, resume_from: null });
    const text = JSON.stringify(h.take());
    for (const secret of ['SECRET TITLE', 'resume-me', 't.jsonl', 'rm -rf', 'delete']) expect(text).not.toContain(secret);
    expect(text).toContain('"session":null');
  });

  it('what a prompt asks travels by default; the session id and transcript never do', async () => {
    const h = harness();
    h.pub.update(
      SRV,
      'inc1',
      rows(
        agentRow('%1', 'blocked', {
          session: 'resume-me',
          transcript: '/home/u/t.jsonl',
          pending_call: '{"command":"rm -rf x"}',
          pending_summary: 'Bash: rm -rf x',
        }),
      ),
    );
    h.pub.markReady();
    await h.say({ type: 'welcome', protocol: 1, resume_from: null });
    const text = JSON.stringify(h.take());
    for (const secret of ['SECRET TITLE', 'resume-me', 't.jsonl']) expect(text).not.toContain(secret);
    expect(text).toContain('"pending_summary":"Bash: rm -rf x"');
  });
});
