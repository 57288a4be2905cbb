// When a long-lived collector cycles a server, and what shares a wake-up. A settled server whose
// output watch hears every session is swept only rarely (the safety net), a degraded watch brings
// the short idle sweep back at once, and the heartbeat and the server rescan ride one timer.
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import type { CycleResult, Engine } from '../../collector/engine/cycle.js';
import { ServerEngines } from '../../collector/fleet/engines.js';

beforeEach(() => vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] }));
afterEach(() => vi.useRealTimers());

function harness(opts: { settled?: boolean; sweepMs?: number } = {}) {
  const cycles: number[] = [];
  const beats: number[] = [];
  const scans: number[] = [];
  let healthy = true;
  let failing = false;
  let wake: () => void = () => undefined;
  const engine = {
    server: { forget: () => undefined, get: async () => ({ socketPath: '/tmp/tmux-0/default', incarnation: '1:1' }) },
    cycle: async (): Promise<CycleResult> => {
      cycles.push(Date.now());
      if (failing) throw new Error('tmux did not answer');
      return { now: Date.now(), rows: [], panes: [], stampede: false, produced: false, settled: opts.settled ?? true };
    },
    heartbeat: async () => void beats.push(Date.now()),
    runner: { close: () => undefined },
  } as unknown as Engine;
  const engines = new ServerEngines({
    discover: async () => {
      scans.push(Date.now());
      return [{ key: '/tmp/tmux-0/default', target: { kind: 'path', path: '/tmp/tmux-0/default' } }];
    },
    open: async () => engine,
    sink: { update: () => undefined, gone: () => undefined, markReady: () => undefined },
    intervalMs: 1000,
    idleMs: 5000,
    sweepMs: opts.sweepMs,
    heartbeatMs: 1500,
    listenWake: async (_path, w) => {
      wake = w;
      return { close: () => undefined, healthy: () => healthy };
    },
  });
  return {
    engines,
    cycles,
    beats,
    scans,
    setHealthy: (h: boolean) => (healthy = h),
    setFailing: (f: boolean) => (failing = f),
    wake: () => wake(),
  };
}

/** Run timers for `ms` and let the awaited promises in between settle. */
async function pass(ms: number): Promise<void> {
  for (let i = 0; i < ms / 100; i++) await vi.advanceTimersByTimeAsync(100);
}

it('a settled server whose every session is heard is swept every sweepMs, the safety net', async () => {
  const h = harness({ sweepMs: 30_000 });
  await h.engines.start();
  expect(h.cycles).toHaveLength(1);
  await pass(29_000);
  expect(h.cycles).toHaveLength(1);
  // The sweep comes even though nothing woke the engine.
  await pass(2_000);
  expect(h.cycles).toHaveLength(2);
  await pass(30_000);
  expect(h.cycles).toHaveLength(3);
  h.engines.stop();
});

it('a watch that stops hearing a session brings back the short idle sweep', async () => {
  const h = harness({ sweepMs: 30_000 });
  await h.engines.start();
  await pass(1_000);
  // The output watch reports its client gone: it wakes the engine, which then sweeps every 5 s.
  h.setHealthy(false);
  h.wake();
  await pass(100);
  const woke = h.cycles.length;
  expect(woke).toBe(2);
  await pass(11_000);
  expect(h.cycles.length - woke).toBe(2);
  // Heard again: back to the rare sweep after the next cycle.
  h.setHealthy(true);
  await pass(5_000);
  const back = h.cycles.length;
  await pass(25_000);
  expect(h.cycles.length).toBe(back);
  h.engines.stop();
});

it('without a sweep for heard servers, the idle sweep applies; an unsettled server cycles at the interval', async () => {
  const idle = harness();
  await idle.engines.start();
  await pass(10_500);
  expect(idle.cycles).toHaveLength(3);
  idle.engines.stop();
  const busy = harness({ settled: false, sweepMs: 30_000 });
  await busy.engines.start();
  await pass(3_500);
  expect(busy.cycles).toHaveLength(4);
  busy.engines.stop();
});

it('heartbeats and the server rescan share one timer', async () => {
  const h = harness({ sweepMs: 30_000 });
  await h.engines.start();
  const scans0 = h.scans.length;
  await pass(15_000);
  expect(h.beats).toHaveLength(10);
  // A 2 s rescan rounds up to every second 1.5 s heartbeat, at the same moments: no wake-up of its own.
  const scans = h.scans.slice(scans0);
  expect(scans).toEqual(h.beats.filter((_, i) => i % 2 === 1));
  h.engines.stop();
});

it('a server whose last cycle failed is not vouched for by the heartbeat', async () => {
  const h = harness({ sweepMs: 30_000 });
  await h.engines.start();
  await pass(3_000);
  expect(h.beats).toHaveLength(2);
  h.setFailing(true);
  h.wake();
  const failedAt = h.cycles.length;
  await pass(6_000);
  expect(h.beats).toHaveLength(2);
  // A failed cycle is retried at the interval, not at the next safety sweep.
  expect(h.cycles.length - failedAt).toBeGreaterThanOrEqual(5);
  h.setFailing(false);
  h.wake();
  await pass(3_000);
  expect(h.beats).toHaveLength(4);
  h.engines.stop();
});
