// The command line's side of a hub: where it is, which token to show it, and the two ways of
// reading it (one document, or a stream of lines).

import { safeText } from '../../shared/terminal-text.js';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Agent, type Dispatcher } from 'undici';
import { certificateProblem, type HubTlsOptions } from '../../shared/hub-tls.js';
import { speaksTls } from '../../shared/tls-probe.js';
import { UsageError, type Parsed } from '../args.js';
import { hubTrustGiven, hubTrustOf } from '../hub-trust.js';
import type { SELECTOR } from '../verb-flags.js';
import { defaultTokenFile } from '../hub-files.js';
import { ExitError } from '../local.js';

export interface HubTarget {
  base: URL;
  token: string | null;
  /** `--hub-ca` / `--hub-fingerprint` (or TMA_HUB_CA / TMA_HUB_FINGERPRINT): the TLS options to dial with; absent: the system's roots. */
  tls?: () => Promise<HubTlsOptions>;
  /**
   * The global flags that make a child `tma` dial this hub exactly so (URL, token file, trust):
   * a view's act and jump children take these, never a list of their own that could miss one.
   */
  childFlags: string[];
}

function readTokenFile(path: string, what: string): string {
  try {
    const t = readFileSync(path, 'utf8').trim();
    if (!t) throw new ExitError(`${what} ${path} is empty`, 1);
    return t;
  } catch (e) {
    if (e instanceof ExitError) throw e;
    throw new ExitError(`cannot read ${what} ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, 1);
  }
}

/** `--hub URL` or `TMA_HUB`; null when neither is set (the verb then works locally). */
export function hubUrlOf(p: Parsed, env: NodeJS.ProcessEnv): string | null {
  return p.globals.hub ?? (env.TMA_HUB || null);
}

/**
 * Token: `--token-file`, else `TMA_HUB_TOKEN` (the token itself, or `@path`), else the token a
 * zero-config `tma hub` on this machine wrote, if there is one.
 */
export function hubTarget(p: Parsed, env: NodeJS.ProcessEnv): HubTarget {
  const raw = hubUrlOf(p, env)!;
  let base: URL;
  try {
    base = new URL(raw.includes('://') ? raw : `http://${raw}`);
  } catch {
    throw new UsageError(`--hub: not a URL: ${raw}`);
  }
  if (base.protocol === 'ws:') base.protocol = 'http:';
  if (base.protocol === 'wss:') base.protocol = 'https:';
  if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new UsageError(`--hub: use http://HOST:PORT, not ${base.protocol}`);
  const file = p.globals['token-file'];
  let token: string | null = null;
  if (file) token = readTokenFile(file, '--token-file');
  else if (env.TMA_HUB_TOKEN) token = env.TMA_HUB_TOKEN.startsWith('@') ? readTokenFile(env.TMA_HUB_TOKEN.slice(1), 'TMA_HUB_TOKEN file') : env.TMA_HUB_TOKEN;
  else {
    try {
      token = readFileSync(defaultTokenFile(env), 'utf8').trim() || null;
    } catch {
      token = null;
    }
  }
  const tls = hubTrustOf(p, base, env);
  const childFlags = ['--hub', base.origin, ...(file ? ['--token-file', resolve(file)] : [])];
  const trust = tls ? hubTrustGiven(p, env)?.trust : undefined;
  if (trust?.caFile !== undefined) childFlags.push('--hub-ca', resolve(trust.caFile));
  if (trust?.fingerprint !== undefined) childFlags.push('--hub-fingerprint', trust.fingerprint);
  return { base, token, ...(tls ? { tls } : {}), childFlags };
}

/** Node's fetch with the hub's TLS trust, when one was given (undici is the library inside it). */
export async function dispatcherOf(t: HubTarget): Promise<{ dispatcher?: Dispatcher }> {
  if (!t.tls) return {};
  let connect: HubTlsOptions;
  try {
    connect = await t.tls();
  } catch (e) {
    throw await unreachable(t, e);
  }
  return { dispatcher: new Agent({ connect }) };
}

function headers(t: HubTarget, extra: Record<string, string> = {}): Record<string, string> {
  return { ...extra, ...(t.token ? { authorization: `Bearer ${t.token}` } : {}) };
}

async function explain(res: Response): Promise<string> {
  let detail = '';
  try {
    const body = (await res.json()) as { error?: string };
    detail = typeof body.error === 'string' && body.error ? `: ${safeText(body.error)}` : '';
  } catch {
    // not JSON
  }
  if (res.status === 401) return `the hub refused the token (401${detail}); pass --token-file or set TMA_HUB_TOKEN`;
  if (res.status === 403) return `the hub refused this token for that request (403${detail})`;
  return `the hub answered ${res.status}${detail}`;
}

export async function unreachable(t: HubTarget, e: unknown): Promise<ExitError> {
  const problem = certificateProblem(e);
  if (problem) return new ExitError(`hub ${t.base.origin} not trusted: ${problem}`, 1);
  const cause = (e as { cause?: { code?: string } }).cause?.code ?? (e as Error).message;
  // A hub that serves TLS drops a plain request unanswered: a handshake probe tells that apart.
  if (t.base.protocol === 'http:' && /UND_ERR_SOCKET|ECONNRESET|socket/i.test(cause) && (await speaksTls(t.base.origin.replace(/^http:/, 'ws:')))) {
    const https = t.base.origin.replace(/^http:/, 'https:');
    return new ExitError(
      `hub ${t.base.origin} serves TLS: use --hub ${https} with --hub-ca FILE or --hub-fingerprint SHA256 (\`tma hub tls --show\` on the hub prints both)`,
      1,
    );
  }
  return new ExitError(`hub ${t.base.origin} unreachable: ${cause}`, 1);
}

export async function getJson<T>(t: HubTarget, path: string, query: URLSearchParams = new URLSearchParams()): Promise<T> {
  const url = new URL(path, t.base);
  url.search = query.toString();
  const via = await dispatcherOf(t);
  let res: Response;
  try {
    res = await fetch(url, { headers: headers(t), signal: AbortSignal.timeout(10_000), ...via });
  } catch (e) {
    throw await unreachable(t, e);
  }
  if (!res.ok) throw new ExitError(await explain(res), res.status === 400 ? 2 : 1);
  return (await res.json()) as T;
}

export async function postJson<T>(t: HubTarget, path: string, body: unknown, timeoutMs: number): Promise<{ status: number; body: T }> {
  const via = await dispatcherOf(t);
  let res: Response;
  try {
    res = await fetch(new URL(path, t.base), {
      ...via,
      method: 'POST',
      headers: headers(t, { 'content-type': 'application/json' }),
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (e) {
    throw await unreachable(t, e);
  }
  if (res.status === 401 || res.status === 403) throw new ExitError(await explain(res), 1);
  return { status: res.status, body: (await res.json()) as T };
}

/**
 * Server-Sent Events from the hub, one `data:` payload per call of `onData`. Resolves when the
 * hub closes the stream; rejects when it cannot be opened.
 */
// eslint-disable-next-line @typescript-eslint/no-invalid-void-type -- onData returns nothing to go on, or true to stop
export async function streamSse(t: HubTarget, path: string, query: URLSearchParams, onData: (data: string) => boolean | void): Promise<void> {
  const url = new URL(path, t.base);
  url.search = query.toString();
  const ctl = new AbortController();
  const via = await dispatcherOf(t);
  let res: Response;
  try {
    res = await fetch(url, { headers: headers(t, { accept: 'text/event-stream' }), signal: ctl.signal, ...via });
  } catch (e) {
    throw await unreachable(t, e);
  }
  if (!res.ok || !res.body) throw new ExitError(await explain(res), res.status === 400 ? 2 : 1);
  const decoder = new TextDecoder();
  let buf = '';
  let data: string[] = [];
  try {
    for await (const chunk of res.body) {
      buf += decoder.decode(chunk as Uint8Array, { stream: true });
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl).replace(/\r$/, '');
        buf = buf.slice(nl + 1);
        if (line === '') {
          if (data.length && onData(data.join('\n')) === false) {
            ctl.abort();
            return;
          }
          data = [];
        } else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
      }
    }
  } catch (e) {
    if (ctl.signal.aborted) return;
    throw new ExitError(`the hub stream broke: ${(e as Error).message}`, 1);
  }
}

/** Query parameters for the selector flags a fleet verb was given. */
export function selectorQuery(p: Parsed<typeof SELECTOR>): URLSearchParams {
  const q = new URLSearchParams();
  for (const k of ['state', 'agent', 'host', 'repo', 'branch', 'session'] as const) {
    const v = p.opts[k];
    if (v !== undefined) q.set(k, v);
  }
  return q;
}
