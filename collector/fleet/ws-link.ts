// The collector dials its hub: a WebSocket to /v1/collect with a bearer token, redialled with
// capped, fully jittered exponential backoff whenever it drops. Each connection is handed out as
// a FrameLink; the publisher takes it over and says hello. Given several hubs (hub-list.ts), a
// failed or refused link moves on to the next one.

import WebSocket from 'ws';
import type { FrameLink } from '../../shared/link.js';
import { HEARTBEAT_MS, MAX_FRAME_BYTES } from '../../shared/protocol.js';
import { backoffDelay, DEFAULT_BACKOFF, type BackoffPolicy } from '../../shared/backoff.js';
import type { LineLog } from '../../shared/log-level.js';
import { HubList, welcomeHubs } from './hub-list.js';
import { plainToTls, speaksTls, wantsWss } from '../../shared/tls-probe.js';
import { certificateProblem, type HubTlsOptions } from '../../shared/hub-tls.js';

export { collectUrl } from './hub-list.js';

function wsLink(ws: WebSocket): FrameLink {
  const msg: ((t: string) => void)[] = [];
  const closed: ((r: string) => void)[] = [];
  let open = true;
  const end = (reason: string) => {
    if (!open) return;
    open = false;
    closed.forEach((cb) => cb(reason));
  };
  ws.on('message', (data, isBinary) => {
    if (!open || isBinary) return;
    const text = data.toString();
    msg.forEach((cb) => cb(text));
  });
  ws.on('close', (code, why) => end(`closed (${code}${why.length ? `: ${why.toString()}` : ''})`));
  ws.on('error', (e) => end(e.message));
  return {
    send(text) {
      if (open && ws.readyState === WebSocket.OPEN) ws.send(text);
    },
    onMessage(cb) {
      msg.push(cb);
    },
    onClose(cb) {
      closed.push(cb);
    },
    close(reason = 'closed') {
      if (!open) return;
      ws.close(1000, reason.slice(0, 120));
      // A hub that never completes the closing handshake must not keep the socket around.
      setTimeout(() => ws.terminate(), 2000).unref();
      end(reason);
    },
  };
}

export interface DialOptions {
  url: string;
  /** Several hubs, tried in order (`url` is then ignored): the next one when a link fails or is refused. */
  hubs?: HubList;
  token: string;
  onLink: (link: FrameLink) => void;
  log?: LineLog;
  backoff?: BackoffPolicy;
  /** After a refusal a retry cannot fix (bad token, wrong host, old protocol): minutes, not seconds. */
  refusedBackoff?: BackoffPolicy;
  random?: () => number;
  /** A welcomed link with no error frame for this long has had its snapshot taken: backoff resets. */
  healthyAfterMs?: number;
  /** TLS trust for a wss:// hub (`--hub-ca`, `--hub-fingerprint`; shared/hub-tls.ts), worked out per dial. */
  tls?: (url: string) => Promise<HubTlsOptions>;
}

/** A refusal that only a person can fix: the next try waits between one and ten minutes. */
export const REFUSED_BACKOFF: BackoffPolicy = { baseMs: 60_000, capMs: 600_000 };

/**
 * How long after a host-busy answer the collector keeps retrying at the base delay. Host-busy
 * mostly means this collector's own old link still holds the host: on a hub that died (its claim
 * runs out within the lease, 3 s by default) or one that has not yet seen the old link drop. A
 * backoff grown meanwhile would land seconds after the host is free; past this window, a second
 * collector for the same host backs off as any other failure does.
 */
export const BUSY_HURRY_MS = 15_000;

/** What an error frame from the hub says about retrying: null when it is not a refusal. */
function refusalOf(text: string, welcomed: boolean): string | null {
  let f: { type?: unknown; code?: unknown; message?: unknown };
  try {
    f = JSON.parse(text) as typeof f;
  } catch {
    return null;
  }
  if (f?.type !== 'error') return null;
  const permanent = f.code === 'unauthorized' || f.code === 'host-mismatch' || (f.code === 'protocol' && !welcomed);
  return permanent ? `${String(f.code)}: ${String(f.message).slice(0, 300)}` : null;
}

export interface Dialer {
  stop(): void;
}

/** Keep a link to the hub up until stopped. */
export function dialHub(opts: DialOptions): Dialer {
  const log = opts.log ?? (() => undefined);
  const policy = opts.backoff ?? DEFAULT_BACKOFF;
  const random = opts.random ?? Math.random;
  const refusedPolicy = opts.refusedBackoff ?? REFUSED_BACKOFF;
  const hubs = opts.hubs ?? new HubList([opts.url]);
  let attempt = 0;
  let refusedAttempt = 0;
  /** When the first host-busy answer of this spell came (see BUSY_HURRY_MS); null when none. */
  let busySince: number | null = null;
  /** Every hub tried since the list last wrapped refused this collector (a person must act). */
  let roundRefused = true;
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let current: FrameLink | null = null;
  /** The refusal last logged: the same one again is not repeated (it would say nothing new). */
  let lastRefusal: string | null = null;

  const retry = (why: string, refusal: string | null = null, level: 'info' | 'warn' = 'info', busy = false) => {
    if (stopped) return;
    if (busy) busySince ??= Date.now();
    const hurry = busySince !== null && Date.now() - busySince < BUSY_HURRY_MS;
    /** The backoff step for this retry: held at the first while hurrying, else the grown one. */
    const step = (grow: boolean) => (hurry ? 0 : grow ? attempt++ : attempt);
    if (hubs.size > 1) {
      // Several hubs: the next one is tried; only a whole round refused waits for a person, and
      // the backoff grows per round, so moving on from a dead hub costs no more than one step.
      const from = hubs.current;
      roundRefused &&= refusal !== null;
      const wrapped = hubs.advance();
      if (!wrapped || !roundRefused) {
        const delay = backoffDelay(step(wrapped), policy, random);
        const said = refusal ?? why;
        log(
          `hub ${from} ${refusal !== null || busy ? `refused this collector (${said})` : `link ${said}`}; trying ${hubs.current} in ${delay} ms`,
          refusal !== null || busy ? 'warn' : level,
        );
        if (wrapped) roundRefused = true;
        timer = setTimeout(connect, delay);
        return;
      }
      roundRefused = true;
      refusal = `every hub refused; last: ${refusal}`;
    }
    if (refusal !== null) {
      // Waits at least the policy's base: a person has to change something first.
      const delay = refusedPolicy.baseMs + backoffDelay(refusedAttempt++, refusedPolicy, random);
      if (refusal !== lastRefusal)
        log(`hub refused this collector (${refusal}); retrying in ${Math.round(delay / 1000)} s, quietly until the reason changes`, 'warn');
      lastRefusal = refusal;
      timer = setTimeout(connect, delay);
      return;
    }
    const delay = backoffDelay(step(true), policy, random);
    log(`hub link ${why}; reconnecting in ${delay} ms`, level);
    timer = setTimeout(connect, delay);
  };

  // A certificate this collector does not trust only a person can fix: said once, retried slowly.
  const tlsRefused = (e: unknown) => {
    const problem = certificateProblem(e);
    if (problem) {
      if (problem !== lastRefusal) log(`cannot trust the hub at ${hubs.current}: ${problem}; retrying quietly until the reason changes`, 'warn');
      lastRefusal = problem;
      retry(problem, problem);
    } else retry(`to ${hubs.current} failed: ${(e as Error).message}`, null, 'warn');
  };

  function connect() {
    timer = null;
    if (stopped) return;
    if (!opts.tls) {
      open({});
      return;
    }
    opts.tls(hubs.current).then((tls) => {
      if (!stopped) open(tls);
    }, tlsRefused);
  }

  function open(tls: HubTlsOptions) {
    const url = hubs.current;
    const ws = new WebSocket(url, {
      ...tls,
      headers: { authorization: `Bearer ${opts.token}` },
      maxPayload: MAX_FRAME_BYTES + 1024,
      handshakeTimeout: 10_000,
      perMessageDeflate: false,
    });
    let opened = false;
    ws.on('unexpected-response', (_req, res) => {
      ws.terminate();
      const code = res.statusCode ?? 0;
      const why = `refused by the hub (HTTP ${code}${code === 401 ? ': unknown token' : code === 403 ? ': not a collector token' : ''})`;
      retry(why, code === 401 || code === 403 ? why : null);
    });
    ws.on('open', () => {
      opened = true;
      const link = wsLink(ws);
      current = link;
      let welcomed = false;
      let erred = false;
      let refusal: string | null = null;
      let busy = false;
      let healthy: ReturnType<typeof setTimeout> | null = null;
      // A hello answered is not yet a link that works: the hub refuses a bad snapshot at once, so a
      // welcomed link that hears no error for a while has had its snapshot taken. Only then does the
      // backoff reset; a link refused every time keeps backing off.
      link.onMessage((text) => {
        refusal ??= refusalOf(text, welcomed);
        if (text.includes('"type":"error"')) {
          erred = true;
          busy ||= text.includes('"code":"host-busy"');
        }
        if (welcomed || !text.includes('"type":"welcome"')) return;
        welcomed = true;
        const learned = hubs.learn(welcomeHubs(text));
        if (learned.length > 0) log(`hub ${url} names other hubs; will fail over to ${learned.join(', ')}`);
        healthy = setTimeout(() => {
          if (erred || current !== link) return;
          attempt = 0;
          refusedAttempt = 0;
          busySince = null;
          if (lastRefusal !== null) log('hub link up again');
          lastRefusal = null;
        }, opts.healthyAfterMs ?? HEARTBEAT_MS);
      });
      link.onClose((reason) => {
        if (healthy) clearTimeout(healthy);
        if (current === link) current = null;
        retry(reason, refusal, 'info', busy);
      });
      opts.onLink(link);
    });
    let connectError: Error | null = null;
    ws.on('error', (e) => {
      // 'close' follows an error before open; the retry there says both what failed and when next.
      if (!opened && ws.readyState !== WebSocket.OPEN) connectError = e;
    });
    ws.on('close', () => {
      if (opened || timer !== null || stopped) return;
      if (!plainToTls(url, connectError)) {
        tlsRefused(connectError ?? new Error('could not connect'));
        return;
      }
      void speaksTls(url).then((tls) => {
        if (stopped || timer !== null) return;
        if (!tls) return tlsRefused(connectError!);
        // Only a person can change the URL: said once, retried slowly like a refused certificate.
        const problem = wantsWss(url);
        if (problem !== lastRefusal) log(problem, 'warn');
        lastRefusal = problem;
        retry(problem, problem);
      });
    });
  }

  connect();
  return {
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      current?.close('collector stopping');
    },
  };
}
