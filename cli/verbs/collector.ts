// `tma collector`: the long-lived fleet collector. It follows every tmux server of this user (or
// the ones named), runs the local engine on each, and publishes title-free rows to a hub, over a
// WebSocket it dials (--hub) or over stdin/stdout (--stdio, run by the hub's ssh transport).

import { readFileSync } from 'node:fs';
import { stdioLink } from '../../collector/fleet/stdio-link.js';
import { dialHub } from '../../collector/fleet/ws-link.js';
import { HubList, parseHubList } from '../../collector/fleet/hub-list.js';
import { hostName } from '../../collector/tmux/host.js';
import { hostLabel } from '../../shared/host-label.js';
import { UsageError, type Parsed } from '../args.js';
import type { COLLECTOR } from '../verb-flags.js';
import { ExitError, guard } from '../local.js';
import { assembleCollector, heartbeatOverride, IDLE_SWEEP_MS, WATCHED_SWEEP_MS } from '../collector-assembly.js';
import { tokenFileWarning } from '../../shared/token-file-mode.js';
import { hubTrustOf } from '../hub-trust.js';
import type { HubTlsOptions } from '../../shared/hub-tls.js';
import { logLevelOf } from '../log-setup.js';
import { createLogger, lineLogTo } from '../../shared/log.js';

const HOST_NAME = /^[A-Za-z0-9._-]{1,253}$/;

function hostOf(p: Parsed<typeof COLLECTOR>): string {
  const given = p.opts['host-name'];
  if (given !== undefined) {
    if (!HOST_NAME.test(given)) throw new UsageError('--host-name uses letters, digits, dot, dash and underscore');
    return given;
  }
  return hostLabel(hostName());
}

function intervalOf(p: Parsed<typeof COLLECTOR>): number {
  const v = p.opts.interval;
  if (v === undefined) return 1000;
  const secs = Number(v);
  if (!/^\d+(\.\d+)?$/.test(v) || !(secs > 0)) throw new UsageError('--interval takes a positive number of seconds');
  return Math.round(secs * 1000);
}

/** The token, and a warning when others can read its file (logged once the logger exists). */
function readToken(file: string): { token: string; loose: string | null } {
  let token: string;
  try {
    token = readFileSync(file, 'utf8').trim();
  } catch (e) {
    throw new ExitError(`cannot read --token-file: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, 1);
  }
  if (!token) throw new ExitError('--token-file is empty', 1);
  return { token, loose: tokenFileWarning(file) };
}

/**
 * `--hub-ca`/`--hub-fingerprint` for every hub of the list, worked out for the one being dialled
 * (a pin is checked against that hub). The hubs given are checked now, so a ws:// URL with
 * --hub-ca is a usage error; a hub learnt from a welcome later is checked when it is dialled.
 */
function trustPerHub(p: Parsed<typeof COLLECTOR>, given: readonly string[]): ((url: string) => Promise<HubTlsOptions>) | null {
  const known = new Map(given.map((u) => [u, hubTrustOf(p, new URL(u))]));
  if (![...known.values()].some(Boolean)) return null;
  return async (url) => {
    const trust = known.has(url) ? known.get(url) : hubTrustOf(p, new URL(url));
    return trust ? trust() : {};
  };
}

export async function main(p: Parsed<typeof COLLECTOR>): Promise<number> {
  const stdio = p.opts.stdio === true;
  const hub = p.globals.hub;
  if (stdio && hub) throw new UsageError('give --hub or --stdio, not both');
  if (!stdio && !hub) throw new UsageError('tma collector needs --hub ws://HOST:PORT (with --token-file) or --stdio');
  const tokenFile = p.globals['token-file'];
  if (hub && !tokenFile) throw new UsageError('--hub needs --token-file');
  const host = hostOf(p);
  const intervalMs = intervalOf(p);
  const level = logLevelOf(p, process.env);
  let hubs: HubList | null = null;
  try {
    // A comma list: tried in this order, the next when a link fails (hubs a welcome names join the end).
    hubs = hub ? new HubList(parseHubList(hub)) : null;
  } catch (e) {
    // A URL of the wrong kind is a mistake in the command line, said in one line.
    throw new UsageError((e as Error).message);
  }
  const tls = hubs ? trustPerHub(p, hubs.all) : null;

  // The link to an ssh hub is stdin/stdout: watched from the first moment, so an end of input (or
  // a write error) during start-up ends this process as surely as one later on.
  const stdioEnd = stdio ? stdioLink(process.stdin, process.stdout) : null;
  return guard(async () => {
    const env = process.env;
    const { token, loose } = tokenFile ? readToken(tokenFile) : { token: '', loose: null };
    let stopping: number | null = null;
    stdioEnd?.onClose(() => (stopping ??= 0));
    const log = lineLogTo(await createLogger({ name: 'tma-collector', level }));
    if (loose) log(loose, 'warn');
    // Without --interval, a collector that watches output sweeps an unchanging server every 5 s.
    const idleMs = p.opts.interval === undefined ? IDLE_SWEEP_MS : intervalMs;
    // …and every 30 s while every session's output is heard.
    const sweepMs = p.opts.interval === undefined ? WATCHED_SWEEP_MS : intervalMs;
    const { publisher, engines } = await assembleCollector(p, { host, intervalMs, idleMs, sweepMs, env, log });

    let finish: (code: number) => void = () => undefined;
    const done = new Promise<number>((r) => (finish = r));
    let dialer: { stop(): void } | null = null;
    let started = false;
    const shutdown = (code: number) => {
      stopping ??= code;
      dialer?.stop();
      publisher.close();
      // Engines still starting are stopped once their start returns (below).
      if (started) engines.stop();
      // Nothing more will be read; an open stdin would keep the process alive.
      if (stdio) process.stdin.destroy();
      finish(code);
      // Whatever handle a stopped part may still hold, the process does not outlive its link.
      setTimeout(() => process.exit(code), 3000).unref();
    };
    process.once('SIGINT', () => shutdown(0));
    process.once('SIGTERM', () => shutdown(0));

    if (stdioEnd) {
      if (stopping !== null) {
        shutdown(stopping);
        return done;
      }
      stdioEnd.onClose(() => shutdown(0));
      publisher.attach(stdioEnd);
    } else {
      dialer = dialHub({
        url: hubs!.current,
        hubs: hubs!,
        token,
        onLink: (link) => publisher.attach(link),
        log,
        healthyAfterMs: heartbeatOverride(env),
        ...(tls ? { tls } : {}),
      });
    }
    await engines.start();
    started = true;
    if (stopping !== null) engines.stop();
    return done;
  });
}
