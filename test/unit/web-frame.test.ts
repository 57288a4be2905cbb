// The page's per-frame redraw (hub/web/frame.js) against a fake window: many requests between two
// frames cost one draw; a hidden tab, which gets no frames, is drawn by the timer; showing the tab
// draws what is pending at once.

import { describe, expect, it } from 'vitest';
import { NO_FRAME_MS, perFrame, type FrameEnv } from '../../hub/web/frame.js';

function fakeWindow(visibility: 'visible' | 'hidden') {
  let now = 0;
  let id = 0;
  const frames = new Map<number, () => void>();
  const timers = new Map<number, { at: number; cb: () => void }>();
  const listeners = new Set<() => void>();
  const env: FrameEnv = {
    requestAnimationFrame: (cb) => (frames.set(++id, () => cb(now)), id),
    cancelAnimationFrame: (f) => void frames.delete(f),
    setTimeout: (cb, ms) => (timers.set(++id, { at: now + ms, cb }), id),
    clearTimeout: (t) => void timers.delete(t as number),
    document: {
      visibilityState: visibility,
      addEventListener: (_t, cb) => void listeners.add(cb),
      removeEventListener: (_t, cb) => void listeners.delete(cb),
    },
  };
  return {
    env,
    listeners,
    pending: () => ({ frames: frames.size, timers: timers.size }),
    frame() {
      const fs = [...frames.values()];
      frames.clear();
      for (const f of fs) f();
    },
    advance(ms: number) {
      now += ms;
      for (const [k, t] of [...timers]) if (t.at <= now && timers.delete(k)) t.cb();
    },
    show() {
      env.document!.visibilityState = 'visible';
      for (const l of [...listeners]) l();
    },
  };
}

describe('web page: one redraw per frame', () => {
  it('draws once for any number of requests before a frame, and again only after a new request', () => {
    const w = fakeWindow('visible');
    let draws = 0;
    const f = perFrame(() => draws++, w.env);
    for (let i = 0; i < 50; i++) f.request();
    expect(draws).toBe(0);
    w.frame();
    expect(draws).toBe(1);
    // The fallback timer went with the frame.
    expect(w.pending()).toEqual({ frames: 0, timers: 0 });
    w.advance(NO_FRAME_MS * 4);
    w.frame();
    expect(draws).toBe(1);
    f.request();
    w.frame();
    expect(draws).toBe(2);
  });

  it('draws from the timer when no frame comes, asks a hidden tab for no frame, and draws at once when the tab is shown', () => {
    const w = fakeWindow('hidden');
    let draws = 0;
    const f = perFrame(() => draws++, w.env);
    f.request();
    f.request();
    expect(w.pending()).toEqual({ frames: 0, timers: 1 });
    w.advance(NO_FRAME_MS);
    expect(draws).toBe(1);
    f.request();
    w.show();
    expect(draws).toBe(2);
    expect(w.pending()).toEqual({ frames: 0, timers: 0 });
    // Shown with nothing pending: no draw.
    w.show();
    expect(draws).toBe(2);
  });

  it('forgets a pending draw on cancel, and lets go of the window on stop', () => {
    const w = fakeWindow('visible');
    let draws = 0;
    const f = perFrame(() => draws++, w.env);
    f.request();
    f.cancel();
    w.frame();
    w.advance(NO_FRAME_MS);
    expect(draws).toBe(0);
    f.request();
    f.now();
    expect(draws).toBe(1);
    f.request();
    f.stop();
    w.frame();
    w.advance(NO_FRAME_MS);
    expect(draws).toBe(1);
    expect(w.listeners.size).toBe(0);
  });
});
