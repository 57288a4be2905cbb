// The loop both `wait` verbs share, local and against a hub: observe, hand the observation to the
// shared waiter, and stop on its answer or at the deadline (checked after each observation, so
// `--timeout 0` still looks once).

import type { Selector } from '../shared/selectors.js';
import { safeLines } from '../shared/terminal-text.js';
import {
  parseWaitSpec,
  parseWaitTimeout,
  timeoutMessage,
  WaitUsageError,
  type Observation,
  type Waiter,
  type WaitRow,
  type WaitSpec,
  type WaitStep,
} from '../shared/wait.js';
import { UsageError, type Parsed } from './args.js';
import type { WAIT } from './verb-flags.js';

const TICK_MS = 1000;

export interface WaitRequest {
  spec: WaitSpec;
  timeoutMs: number | null;
  /** As typed, for the timeout message. */
  timeoutRaw: string | undefined;
}

export function waitRequestOf(p: Parsed<typeof WAIT>, sel: Selector): WaitRequest {
  const timeoutRaw = p.opts.timeout;
  try {
    const spec = parseWaitSpec(
      { until: p.opts.until, pane: p.opts.pane, any: p.opts.any === true, all: p.opts.all === true, count: p.opts.count, since: p.opts.since },
      sel,
    );
    return { spec, timeoutMs: timeoutRaw === undefined ? null : parseWaitTimeout(timeoutRaw), timeoutRaw };
  } catch (e) {
    if (e instanceof WaitUsageError) throw new UsageError(e.message);
    throw e;
  }
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** `observe` returns null for a tick that could not look (it has said why itself). */
export async function waitLoop<R extends WaitRow>(
  req: WaitRequest,
  waiter: Waiter<R>,
  observe: () => Promise<Observation<R> | null>,
  finish: (step: Extract<WaitStep<R>, { kind: 'done' }>) => Promise<void>,
): Promise<number> {
  const deadline = req.timeoutMs === null ? Number.POSITIVE_INFINITY : Date.now() + req.timeoutMs;
  for (;;) {
    const obs = await observe();
    if (obs) {
      const step = waiter.step(obs);
      for (const n of step.notes) process.stderr.write(`tma: ${safeLines(n)}\n`);
      if (step.kind === 'exit') {
        process.stderr.write(`tma: ${safeLines(step.message)}\n`);
        return step.code;
      }
      if (step.kind === 'done') {
        await finish(step);
        return 0;
      }
    }
    const left = deadline - Date.now();
    if (left <= 0) {
      process.stderr.write(`tma: ${timeoutMessage(req.spec, req.timeoutRaw ?? '0')}\n`);
      return 124;
    }
    await sleep(Math.min(TICK_MS, left));
  }
}
