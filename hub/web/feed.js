// Keeps the page fed with fleet documents. The live stream is Server-Sent Events read through
// fetch, because EventSource cannot send an Authorization header. It asks for `mode=changes`: one
// full document, then only what moved, applied to a local mirror (changes.js) that hands the page
// whole documents as before; each (re)connect starts again from a fresh document. While the stream
// is down the page polls the plain document every POLL_MS and retries the stream with capped
// exponential backoff and full jitter, so a restarted hub is not hit by every open page in the
// same instant.

import { SseSplitter } from './format.js';
import { FleetMirror } from './changes.js';

const POLL_MS = 2000;
const RETRY_BASE_MS = 1000;
const RETRY_CAP_MS = 30_000;
/** The hub sends a keepalive every heartbeat (5 s by default): this much silence is a dead stream. */
const SILENCE_MS = 20_000;

export class Unauthorized extends Error {}

/**
 * @typedef {object} FeedCallbacks
 * @property {(doc: import('./changes.js').MirrorDocument) => void} document
 * @property {(m: 'live' | 'polling' | 'offline') => void} mode
 * @property {() => void} unauthorized
 * @property {(hubMsMinusBrowserMs: number) => void} clock
 */

/**
 * Start feeding. Callbacks: `document(doc)`, `mode('live' | 'polling' | 'offline')`,
 * `unauthorized()`, `clock(hubMsMinusBrowserMs)` from each response's Date header.
 * Returns a function that stops everything.
 * @param {string} token
 * @param {FeedCallbacks} on
 * @returns {() => void}
 */
export function startFeed(token, on) {
  let stopped = false;
  let attempt = 0;
  /** @type {AbortController | null} */
  let streamAbort = null;
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let pollTimer = undefined;
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let retryTimer = undefined;
  let polling = false;
  const headers = { authorization: `Bearer ${token}` };

  /** @param {Response} res */
  const noteClock = (res) => {
    const d = Date.parse(res.headers.get('date') ?? '');
    // The header has whole seconds: the hub's clock was somewhere in [d, d + 1 s).
    if (Number.isFinite(d)) on.clock(d + 500 - Date.now());
  };

  /** @param {Response} res */
  const refuse = (res) => {
    if (res.status === 401 || res.status === 403) {
      stop();
      on.unauthorized();
      return true;
    }
    return false;
  };

  async function pollOnce() {
    if (stopped || !polling) return;
    try {
      const res = await fetch('/v1/agents', { headers, cache: 'no-store' });
      if (refuse(res)) return;
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      noteClock(res);
      /** @type {unknown} */
      const body = await res.json();
      const doc = /** @type {import('./changes.js').MirrorDocument} */ (body);
      if (!stopped && polling) {
        on.document(doc);
        on.mode('polling');
      }
    } catch {
      if (!stopped && polling) on.mode('offline');
    }
    if (!stopped && polling) pollTimer = setTimeout(pollOnce, POLL_MS);
  }

  function startPolling() {
    if (polling || stopped) return;
    polling = true;
    void pollOnce();
  }

  function stopPolling() {
    polling = false;
    clearTimeout(pollTimer);
    pollTimer = undefined;
  }

  function scheduleRetry() {
    if (stopped) return;
    const ceiling = Math.min(RETRY_CAP_MS, RETRY_BASE_MS * 2 ** attempt);
    attempt += 1;
    retryTimer = setTimeout(openStream, Math.max(250, Math.random() * ceiling));
  }

  async function openStream() {
    if (stopped) return;
    const ctl = new AbortController();
    streamAbort = ctl;
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    let silence = undefined;
    const arm = () => {
      clearTimeout(silence);
      silence = setTimeout(() => ctl.abort(), SILENCE_MS);
    };
    try {
      arm();
      const res = await fetch('/v1/subscribe?mode=changes', {
        headers: { ...headers, accept: 'text/event-stream' },
        cache: 'no-store',
        signal: ctl.signal,
      });
      if (refuse(res)) return;
      if (!res.ok || !res.body) throw new Error(`HTTP ${res.status}`);
      noteClock(res);
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      const mirror = new FleetMirror();
      const split = new SseSplitter();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        arm();
        for (const data of split.push(value)) {
          const msg = /** @type {unknown} */ (JSON.parse(data));
          if (stopped) return;
          const doc = mirror.apply(msg);
          if (!doc) continue;
          // Only a document proves the stream works (a changes line needs one before it on this
          // connection); then the fallback can go.
          attempt = 0;
          stopPolling();
          on.document(doc);
          on.mode('live');
        }
      }
    } catch {
      // Network error, abort on silence, or a garbled event: all mean "stream down".
    } finally {
      clearTimeout(silence);
      // Release the connection whatever ended the read (a garbled event leaves it open otherwise).
      ctl.abort();
      if (streamAbort === ctl) streamAbort = null;
    }
    if (stopped) return;
    startPolling();
    scheduleRetry();
  }

  function stop() {
    stopped = true;
    stopPolling();
    clearTimeout(retryTimer);
    streamAbort?.abort();
  }

  void openStream();
  return stop;
}

/** Ask the hub who this token is. Resolves `{name, role}`; rejects `Unauthorized` on 401/403.
 * @param {string} token
 * @returns {Promise<{ name: string; role: string }>}
 */
export async function whoami(token) {
  const res = await fetch('/v1/whoami', { headers: { authorization: `Bearer ${token}` }, cache: 'no-store' });
  if (res.status === 401 || res.status === 403) throw new Unauthorized(`HTTP ${res.status}`);
  if (!res.ok) throw new Error(`HTTP ${res.status}`);
  /** @type {unknown} */
  const who = await res.json();
  return /** @type {{ name: string; role: string }} */ (who);
}

/**
 * Fire one action. Resolves the act result (whatever its outcome), or a synthetic one describing
 * why the hub did not answer with a result.
 * @param {string} token
 * @param {Record<string, unknown>} body
 * @returns {Promise<Record<string, unknown>>}
 */
export async function fireAction(token, body) {
  try {
    const res = await fetch('/v1/act', {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      cache: 'no-store',
    });
    const text = await res.text();
    /** @type {Record<string, unknown> | null} */
    let parsed = null;
    try {
      /** @type {unknown} */
      const raw = JSON.parse(text);
      parsed = /** @type {Record<string, unknown> | null} */ (raw);
    } catch {
      parsed = null;
    }
    if (parsed && typeof parsed.outcome === 'string') return parsed;
    const reason = parsed && typeof parsed.error === 'string' ? parsed.error : `HTTP ${res.status}`;
    return { outcome: res.status === 403 ? 'forbidden' : 'failed', reason };
  } catch (e) {
    return { outcome: 'failed', reason: `no answer from the hub (${e instanceof Error ? e.message : String(e)})` };
  }
}
