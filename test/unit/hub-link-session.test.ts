import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ActTimeoutError, LinkClosedError, LinkSession } from '../../hub/link/session.js';
import { HubMetrics } from '../../hub/metrics.js';
import { MemoryFleetStore as FleetStore } from '../../hub/store/memory-store.js';
import { linkPair, type FrameLink } from '../../shared/link.js';
import { EPOCH_A, SERVER, protoRow } from '../support/hub-fake-collector.js';

const HB = 200;
const DEAD = 600;

let store: FleetStore;
let metrics: HubMetrics;
let peer: FrameLink;
let got: Record<string, unknown>[];
let closedWith: string | null;
let session: LinkSession;

const flush = () => vi.advanceTimersByTimeAsync(0);
const send = async (f: Record<string, unknown>) => {
  peer.send(JSON.stringify(f));
  await flush();
};

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
  store = new FleetStore({ clock: () => Date.now() });
  metrics = new HubMetrics();
  const [hubEnd, collectorEnd] = linkPair();
  peer = collectorEnd;
  got = [];
  closedWith = null;
  peer.onMessage((t) => got.push(JSON.parse(t) as Record<string, unknown>));
  peer.onClose((r) => (closedWith = r));
  session = new LinkSession({
    link: hubEnd,
    store,
    metrics,
    logger: pino({ level: 'silent' }),
    transport: 'local',
    boundHost: 'b1',
    heartbeatMs: HB,
    deadAfterMs: DEAD,
    clock: () => Date.now(),
  });
});

afterEach(() => {
  session.close();
  vi.useRealTimers();
});

async function open() {
  await send({ type: 'hello', protocol: 1, host: 'b1', collector_version: 'x', epoch: EPOCH_A, actions_allowed: [] });
  await send({ type: 'snapshot', epoch: EPOCH_A, seq: 1, complete: true, servers: [{ server: SERVER, incarnation: 'i', rows: [protoRow()] }] });
}

describe('link session', () => {
  it('welcomes a hello for its bound host and sends heartbeats every interval', async () => {
    await open();
    expect(got[0]).toEqual({ type: 'welcome', protocol: 1, resume_from: null });
    await vi.advanceTimersByTimeAsync(HB - 1);
    expect(got.filter((f) => f.type === 'heartbeat')).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(got.filter((f) => f.type === 'heartbeat')).toHaveLength(1);
  });

  it('refuses a hello for another host name with host-mismatch and closes', async () => {
    await send({ type: 'hello', protocol: 1, host: 'laptop', collector_version: 'x', epoch: EPOCH_A, actions_allowed: [] });
    expect(got[0]).toMatchObject({ type: 'error', code: 'host-mismatch' });
    expect(closedWith).toMatch(/not laptop/);
    expect(metrics.framesRejected.get('host-mismatch')).toBe(1);
    expect(store.hostStatuses()).toEqual([]);
  });

  it('refuses another protocol version, and any first frame that is not hello', async () => {
    await send({ type: 'heartbeat', at: 1 });
    expect(got[0]).toMatchObject({ type: 'error', code: 'protocol' });
    expect(closedWith).not.toBeNull();
  });

  it('marks the host stale exactly when silent for the dead interval, keeping rows', async () => {
    await open();
    await vi.advanceTimersByTimeAsync(DEAD - 1);
    expect(store.hostStatuses()[0]).toMatchObject({ reachable: true, stale: false });
    await vi.advanceTimersByTimeAsync(1);
    expect(store.hostStatuses()[0]).toMatchObject({ reachable: false, stale: true });
    expect(store.rows().map((r) => [r.state, r.stale])).toEqual([['working', true]]);
    expect(closedWith).toMatch(/silent/);
  });

  it('any frame restarts the silence clock', async () => {
    await open();
    await vi.advanceTimersByTimeAsync(DEAD - 100);
    await send({ type: 'heartbeat', at: Date.now() });
    await vi.advanceTimersByTimeAsync(DEAD - 1);
    expect(store.hostStatuses()[0]!.reachable).toBe(true);
    await vi.advanceTimersByTimeAsync(1);
    expect(store.hostStatuses()[0]!.reachable).toBe(false);
  });

  it('a gap is answered once with an error and a fresh-snapshot welcome', async () => {
    await open();
    const d = (seq: number) => ({ type: 'delta', epoch: EPOCH_A, seq, server: SERVER, incarnation: 'i', upserts: [], removals: ['%1'] });
    await send(d(3));
    await send(d(4));
    expect(got.slice(1)).toEqual([
      { type: 'error', code: 'protocol', message: 'sequence gap: expected 2, got 3; send a fresh snapshot' },
      { type: 'welcome', protocol: 1, resume_from: null },
    ]);
    expect(store.rows()).toHaveLength(1);
    expect(metrics.resyncs).toBe(1);
  });

  describe('a split snapshot that loses a part is never committed as the whole', () => {
    const S2 = '/tmp/tmux-1000/other';
    const part = (complete: boolean, server: string, rows: unknown[]) => ({
      type: 'snapshot',
      epoch: EPOCH_A,
      seq: 7,
      complete,
      servers: [{ server, incarnation: 'i', rows }],
    });
    const titled = { ...protoRow({ pane: '%2' }), title: 'secret' };
    const hosts = () => store.hostStatuses()[0]!;

    it('a refused middle part ends the link; the tail does not commit, the old rows stay stale', async () => {
      await open();
      await send(part(false, SERVER, [protoRow({ pane: '%1', state: 'blocked' })]));
      await send(part(false, S2, [titled]));
      await send(part(true, S2, [protoRow({ pane: '%3' })]));
      expect(got.slice(1).map((f) => f.code)).toEqual(['bad-frame', 'protocol']);
      expect(closedWith).toMatch(/snapshot part was refused/);
      // What the first snapshot said, unchanged and marked stale; nothing of the broken one.
      expect(store.rows().map((r) => [r.server, r.pane, r.state, r.stale])).toEqual([[SERVER, '%1', 'working', true]]);
      expect(hosts()).toMatchObject({ reachable: false, stale: true });
    });

    it('a refused first part (unreadable) makes the next snapshot frame suspect: link ended, nothing committed', async () => {
      await open();
      peer.send('{"type":"snapshot","epoch":');
      await flush();
      await send(part(true, S2, [protoRow({ pane: '%3' })]));
      expect(got.slice(1).map((f) => f.code)).toEqual(['bad-json', 'protocol']);
      expect(store.rows().map((r) => [r.server, r.pane, r.stale])).toEqual([[SERVER, '%1', true]]);
    });

    it('a refused frame that was not a snapshot part changes nothing for the frames after it', async () => {
      await open();
      peer.send('{"type":"snapshot","epoch":');
      await flush();
      await send({ type: 'heartbeat', at: 1 });
      await send({ type: 'delta', epoch: EPOCH_A, seq: 2, server: SERVER, incarnation: 'i', upserts: [titled], removals: [] });
      await send(part(true, S2, [protoRow({ pane: '%3' })]));
      expect(got.slice(1).map((f) => f.code)).toEqual(['bad-json', 'bad-frame']);
      expect(closedWith).toBeNull();
      expect(store.rows().map((r) => [r.server, r.pane, r.stale])).toEqual([[S2, '%3', false]]);
    });
  });

  it('resolves act results by id, and times out at the deadline', async () => {
    await open();
    const act = {
      type: 'act' as const,
      id: 'a1',
      action: 'approve',
      server: SERVER,
      pane: '%1',
      expect_episode_ms: null,
      expect_permission_request: null,
      slot: 's1',
      principal: 'alice',
      deadline_ms: 0,
    };
    const p = session.request(act, 1000);
    await flush();
    expect(got.at(-1)).toEqual(act);
    const result = { schema: 1, action: 'approve', pane: '%1', outcome: 'fired', exit_code: 0, reason: null, host: 'b1', server: SERVER };
    await send({ type: 'act_result', id: 'a1', result });
    await expect(p).resolves.toEqual(result);

    const late = session.request({ ...act, id: 'a2' }, 1000);
    const caught = late.catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(500);
    await send({ type: 'heartbeat', at: Date.now() });
    await vi.advanceTimersByTimeAsync(499);
    await send({ type: 'heartbeat', at: Date.now() });
    expect(session.isOpen).toBe(true);
    let settled = false;
    void late.finally(() => (settled = true)).catch(() => {});
    await flush();
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await caught).toBeInstanceOf(ActTimeoutError);
  });

  it('pending acts fail when the link closes', async () => {
    await open();
    const act = {
      type: 'act' as const,
      id: 'a1',
      action: 'approve',
      server: SERVER,
      pane: '%1',
      expect_episode_ms: null,
      expect_permission_request: null,
      slot: 's1',
      principal: 'alice',
      deadline_ms: 0,
    };
    const p = session.request(act, 10_000).catch((e: unknown) => e);
    peer.close('bye');
    expect(await p).toBeInstanceOf(LinkClosedError);
  });
});
