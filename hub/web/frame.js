// Redraws at most once per animation frame. A flood of stream lines each updates the page's copy
// of the fleet at once, but the screen can only show one state per frame, so drawing is deferred
// to just before the next one and however many lines landed meanwhile cost a single draw.
//
// A hidden tab gets no animation frames at all, so a timer stands in for them (browsers run a
// hidden tab's timers about once a second, which is plenty for a page nobody is looking at), and a
// pending draw happens at once when the tab is shown again rather than waiting for either.

/** Longest a requested draw waits when no frame comes (a hidden or occluded tab). */
export const NO_FRAME_MS = 250;

/**
 * What `perFrame` uses of the window.
 * @typedef {object} FrameEnv
 * @property {(cb: (t: number) => void) => number} [requestAnimationFrame]
 * @property {(id: number) => void} [cancelAnimationFrame]
 * @property {(cb: () => void, ms: number) => unknown} setTimeout
 * @property {(id: unknown) => void} clearTimeout
 * @property {{ visibilityState: string; addEventListener?(type: string, cb: () => void): void; removeEventListener?(type: string, cb: () => void): void }} [document]
 */

/**
 * @typedef {object} PerFrame
 * @property {() => void} request
 * @property {() => void} now
 * @property {() => void} cancel
 * @property {() => void} stop
 */

/**
 * Wrap `draw`. `request()` asks for a draw before the next frame (many requests, one draw);
 * `now()` draws at once if one is pending; `cancel()` forgets a pending draw (use it when drawing
 * for another reason, since that draw shows everything); `stop()` also lets go of the window.
 * `env` is the window (tests pass a fake).
 * @param {() => void} draw
 * @param {FrameEnv} [env]
 * @returns {PerFrame}
 */
export function perFrame(draw, env = /** @type {FrameEnv} */ (/** @type {unknown} */ (globalThis))) {
  let due = false;
  /** @type {number | null} */
  let frame = null;
  /** @type {unknown} */
  let timer = null;

  const clear = () => {
    if (frame !== null) env.cancelAnimationFrame?.(frame);
    if (timer !== null) env.clearTimeout(timer);
    frame = null;
    timer = null;
  };
  const run = () => {
    if (!due) return;
    due = false;
    clear();
    draw();
  };
  const hidden = () => env.document?.visibilityState === 'hidden';

  const shown = () => {
    if (!hidden()) run();
  };
  env.document?.addEventListener?.('visibilitychange', shown);

  return {
    request() {
      if (due) return;
      due = true;
      if (env.requestAnimationFrame && !hidden()) frame = env.requestAnimationFrame(run);
      // Armed in every case: an occluded window may stay "visible" yet get no frames.
      timer = env.setTimeout(run, NO_FRAME_MS);
    },
    now: run,
    cancel() {
      due = false;
      clear();
    },
    /** Forget any pending draw and stop listening for the tab being shown. */
    stop() {
      due = false;
      clear();
      env.document?.removeEventListener?.('visibilitychange', shown);
    },
  };
}
