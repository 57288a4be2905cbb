// The quick `tma status`: what a status bar runs every few seconds, on a host whose collector
// keeps the server's heartbeat fresh. It asks that collector, over the server's wake socket, for
// the outputs of the one tmux chain it needs (collector/fleet/quick-read.ts: the collector runs it
// on the control client it already holds); with no collector answering in time it runs that chain
// itself, as one tmux call. Either way the rows are judged with this process's clock and counted
// and rendered by the same code as the full path (collector/engine/settled-read,
// shared/status-format). Bundled on its own as one CommonJS file (tools/bundle-cli.mjs) that
// bin/tma.js requires before anything else; it loads no engine, no manifests and no validator.
// Whenever the answer could differ from a full cycle's (no fresh heartbeat, a stamp to look at
// again, a config not validated yet, a flag it does not handle, any error), it writes nothing and
// declines: the full path runs, and reuses the read when it got that far.

import { readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { isStatusFormat, renderStatus } from '../shared/status-format.js';
import { selectRow } from '../shared/selectors.js';
import { cachedConfig, configEntryName, fileStamp } from '../collector/config/config-cache-key.js';
import { DEFAULT_CONFIG, type Config } from '../collector/config/config-types.js';
import { configPath } from '../collector/config/load-config.js';
import { settledRows, SETTLED_READ } from '../collector/engine/settled-read.js';
import { askQuickRead } from '../collector/fleet/quick-read.js';
import { canonicalSocketPath, socketPathOfTarget, wakeDir, wakeSocketPath } from '../collector/fleet/wake.js';
import { hostName } from '../collector/tmux/host.js';
import { runChainSync } from '../collector/tmux/sync-chain.js';
import { resolveTarget, tmuxBin, type ServerTarget } from '../collector/tmux/target.js';
import { parseArgv } from './args.js';
import { STATUS } from './status-flags.js';
import { selectorFrom } from './selector-opts.js';

/** Global flags the quick path honours; any other (--hub, --debug-timing, --manifest-dir, …) takes the full path. */
const GLOBALS = new Set(['socket-name', 'socket-path', 'config']);

/**
 * The validated config.toml as the full path would load it, or null when only the full path can
 * tell (not validated and cached yet by this build, unreadable). `configCode` is the bundle file
 * holding the config cache's code, whose stamp keys the entry.
 */
function quickConfig(flag: string | undefined, env: NodeJS.ProcessEnv, configCode: string): Config | null {
  const { path } = configPath(flag, env);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ENOENT' ? DEFAULT_CONFIG : null;
  }
  return cachedConfig(env, configEntryName(fileStamp(configCode), path, text));
}

/** Written straight to fd 1 (no stream to set up). Once writing began the answer is given: a reader
 * that went away is not an error, and a non-blocking pipe that is full takes the rest as a stream. */
function writeAll(text: string): void {
  const buf = Buffer.from(text);
  let off = 0;
  try {
    while (off < buf.length) off += writeSync(1, buf, off);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EAGAIN') process.stdout.write(buf.subarray(off));
  }
}

/**
 * What the quick path did: answered (the output is written, exit 0), or declined; a decline after
 * the tmux read hands its outputs (listingChain(true) first) to the full path's first cycle.
 */
export type QuickResult = { answered: true } | { answered: false; listing?: readonly string[] };

const DECLINED: QuickResult = { answered: false };

/**
 * The outputs of SETTLED_READ from the server's collector, over its wake socket, or null when it
 * does not answer them in time (any miss). TMA_QUICK_STATUS=tmux skips the collector, to compare.
 */
async function askCollector(target: ServerTarget, env: NodeJS.ProcessEnv): Promise<string[] | null> {
  if (env.TMA_QUICK_STATUS === 'tmux') return null;
  const answer = await askQuickRead(wakeSocketPath(canonicalSocketPath(socketPathOfTarget(target, env)), wakeDir(env)));
  return answer.ok ? answer.outs : null;
}

/**
 * Answer `tma <argv>` if it is a local status the heartbeat vouches for, else decline and let the
 * full path run. `bundleDir` holds the bundle's chunks.
 */
export async function statusFast(argv: readonly string[], env: NodeJS.ProcessEnv, bundleDir: string, configChunk: string): Promise<QuickResult> {
  if (env.TMA_HUB) return DECLINED;
  let out: string;
  try {
    const p = parseArgv(argv, { status: STATUS });
    if (p.verb !== 'status' || p.positionals.length) return DECLINED;
    if (Object.keys(p.globals).some((g) => !GLOBALS.has(g))) return DECLINED;
    const names = p.globals['socket-name'] ?? [];
    const paths = p.globals['socket-path'] ?? [];
    if (names.length > 1 || paths.length > 1) return DECLINED;
    const format = p.opts.format ?? 'tmux';
    if (!isStatusFormat(format)) return DECLINED;
    const sel = selectorFrom(p, { fleet: false });
    // Repo and branch labels come from the panes' folders, which only the full path reads.
    if (sel.repo !== null || sel.branch !== null) return DECLINED;
    const config = quickConfig(p.globals.config, env, join(bundleDir, configChunk));
    if (config === null) return DECLINED;
    const target = resolveTarget({ socketName: names[0], socketPath: paths[0], env });
    // The collector's read when it answers in time, else one tmux call of our own (throws on a tmux error).
    const outs = (await askCollector(target, env)) ?? runChainSync(target, tmuxBin(env, config.tmuxBin), SETTLED_READ, { env });
    // After the read: a heartbeat the collector wrote while tmux answered is not from the future.
    const now = Date.now();
    const rows = settledRows(outs, now, config.fold.freshnessMs, hostName());
    if (rows === null) return { answered: false, listing: outs.slice(0, 4) };
    out = renderStatus(
      format,
      rows.filter((r) => selectRow(sel, r)),
      now,
      config.status,
    );
  } catch {
    // Usage errors, tmux errors and the rest are the full path's to word.
    return DECLINED;
  }
  writeAll(out);
  return { answered: true };
}

/** Set by tools/bundle-cli.mjs: the bundle chunk holding the config cache's code. */
declare const TMA_CONFIG_CHUNK: string;

/** The entry bin/tma.js calls from the bundled file; it declines outside the bundle. */
export async function quickStatus(argv: readonly string[], env: NodeJS.ProcessEnv, bundleDir: string): Promise<QuickResult> {
  return typeof TMA_CONFIG_CHUNK === 'string' ? statusFast(argv, env, bundleDir, TMA_CONFIG_CHUNK) : DECLINED;
}
