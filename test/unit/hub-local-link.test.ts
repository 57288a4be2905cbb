import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Publisher } from '../../collector/fleet/publisher.js';
import { attachLocalCollector } from '../../cli/verbs/hub.js';
import { LinkSession } from '../../hub/link/session.js';
import { HubMetrics } from '../../hub/metrics.js';
import { MemoryFleetStore as FleetStore } from '../../hub/store/memory-store.js';
import type { FrameLink } from '../../shared/link.js';

const EPOCH = '0123456789abcdef0123456789abcdef';
const HB = 100;

describe("the hub's embedded collector link", () => {
  let store: FleetStore;
  let sessions: LinkSession[];
  let pub: Publisher;
  let local: { stop(): void };

  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
    store = new FleetStore({ clock: () => Date.now() });
    sessions = [];
    const hub = {
      attachLink(link: FrameLink, o: { transport: 'local' | 'ws' | 'ssh'; host: string }) {
        const s = new LinkSession({
          link,
          store,
          metrics: new HubMetrics(),
          logger: pino({ level: 'silent' }),
          transport: o.transport,
          boundHost: o.host,
          heartbeatMs: HB,
          deadAfterMs: 3 * HB,
          clock: () => Date.now(),
        });
        sessions.push(s);
        return s;
      },
    };
    pub = new Publisher({ host: 'me', version: 't', epoch: EPOCH, allowedActions: [], heartbeatMs: HB, now: () => Date.now() });
    pub.markReady();
    // Random 0.999…: the longest delay the backoff allows for the attempt.
    local = attachLocalCollector(hub, pub, 'me', () => 0.999);
  });

  afterEach(() => {
    local.stop();
    pub.close();
    for (const s of sessions) s.close();
    vi.useRealTimers();
  });

  const host = () => store.hostStatuses().find((h) => h.host === 'me');

  it('pairs again after the hub ends the link, and the host is fresh once more', async () => {
    await vi.advanceTimersByTimeAsync(0);
    expect(host()).toMatchObject({ reachable: true, stale: false });
    sessions[0]!.close('silent for 300 ms');
    await vi.advanceTimersByTimeAsync(0);
    expect(host()).toMatchObject({ reachable: false, stale: true });
    // First redial within the backoff's first ceiling (500 ms), not before its drawn delay.
    await vi.advanceTimersByTimeAsync(498);
    expect(sessions).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(2);
    expect(sessions).toHaveLength(2);
    expect(host()).toMatchObject({ reachable: true, stale: false });
  });

  it('stays down once stopped', async () => {
    await vi.advanceTimersByTimeAsync(0);
    local.stop();
    pub.close();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(sessions).toHaveLength(1);
    expect(host()).toMatchObject({ reachable: false });
  });
});
