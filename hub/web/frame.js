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
 * Wrap `draw`. `request()` asks for a draw before the next frame (many requests, one draw);
 * `now()` draws at once if one is pending; `cancel()` forgets a pending draw (use it when drawing
 * for another reason, since that draw shows everything); `stop()` also lets go of the window.
 * `env` is the window (tests pass a fake).
 */
export function perFrame(draw, env = globalThis) {
  let due = false;
  let frame = null;
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
