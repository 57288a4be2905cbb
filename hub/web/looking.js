// "Someone is looking": while this page is visible and has the focus, it tells the hub every few
// seconds which row the person is on (the row holding the keyboard focus, else the pane a
// notification's link opened the page at), so the hub's sinks need not ring for that pane. Only
// an operator's page counts (hub/notify/looking.ts).

const EVERY_MS = 8000;

/**
 * @param {string} token
 * @returns {() => void} stop
 */
export function startLooking(token) {
  const linked = new URLSearchParams(location.hash.slice(1));
  const fromLink = linked.get('host') && linked.get('pane') ? { host: linked.get('host'), server: linked.get('server'), pane: linked.get('pane') } : null;
  const tick = () => {
    if (document.visibilityState !== 'visible' || !document.hasFocus()) return;
    const el = /** @type {HTMLElement | null | undefined} */ (document.activeElement?.closest('[data-pane][data-host]'));
    const row = el ? { host: el.dataset.host, server: el.dataset.server ?? null, pane: el.dataset.pane } : fromLink;
    if (!row) return;
    void fetch('/v1/looking', {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(row),
    })
      // A viewer's token is refused for good (its look holds nothing back): stop asking.
      .then((r) => (r.status === 403 ? stop() : undefined))
      .catch(() => undefined);
  };
  const stop = () => {
    clearInterval(timer);
    window.removeEventListener('focus', tick);
  };
  const timer = setInterval(tick, EVERY_MS);
  window.addEventListener('focus', tick);
  tick();
  return stop;
}
