// `tma wait`: run the engine every second on this server and hand each cycle to the shared
// waiter until it reports rows, gives up with an exit code, or the deadline passes.

import type { CycleResult } from '../../collector/engine/cycle.js';
import { TmuxError } from '../../collector/tmux/errors.js';
import { lsTextLine } from '../../shared/ls-text.js';
import { localRowObject, rowsDocument, singleRowDocument, toJsonLine, type AgentRow } from '../../shared/row.js';
import { parseWaitSpec, parseWaitTimeout, timeoutMessage, Waiter, WaitUsageError, type WaitStep } from '../../shared/wait.js';
import { flag, str, UsageError, type Parsed } from '../args.js';
import { guard, openLocal } from '../local.js';
import { selectorFrom } from '../selector-opts.js';
import { cwdOf, withRepos } from './ls.js';

export const TICK_MS = 1000;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Rows with their repo trio, resolved each tick only when the selector filters on it; otherwise
 * only the rows that end the wait get one, at emit.
 */
async function rowsOf(res: CycleResult, needRepos: boolean): Promise<AgentRow[]> {
  if (!needRepos) return res.rows;
  return withRepos(res.rows, cwdOf(res));
}

function emit(step: Extract<WaitStep<AgentRow>, { kind: 'done' }>, json: boolean, rows: AgentRow[]): void {
  if (!json) {
    for (const r of rows) process.stdout.write(`${lsTextLine(r)}\n`);
    return;
  }
  const objects = rows.map(localRowObject);
  const doc = step.form === 'row' ? singleRowDocument(objects[0]!) : rowsDocument(objects);
  process.stdout.write(`${toJsonLine(doc)}\n`);
}

export async function main(p: Parsed): Promise<number> {
  const sel = selectorFrom(p, { fleet: false });
  let spec;
  let timeoutMs: number | null = null;
  const timeoutRaw = str(p.opts.timeout);
  try {
    spec = parseWaitSpec(
      {
        until: str(p.opts.until),
        pane: str(p.opts.pane),
        any: flag(p.opts.any),
        all: flag(p.opts.all),
        count: str(p.opts.count),
        since: str(p.opts.since),
      },
      sel,
    );
    if (timeoutRaw !== undefined) timeoutMs = parseWaitTimeout(timeoutRaw);
  } catch (e) {
    if (e instanceof WaitUsageError) throw new UsageError(e.message);
    throw e;
  }
  const json = flag(p.opts.json);
  const needRepos = sel.repo !== null || sel.branch !== null;

  return guard(async () => {
    const local = await openLocal(p, { mode: 'control' });
    try {
      const waiter = new Waiter<AgentRow>(spec);
      const deadline = timeoutMs === null ? Number.POSITIVE_INFINITY : Date.now() + timeoutMs;
      let toldSlow = false;
      for (;;) {
        let res: CycleResult | null = null;
        try {
          res = await local.engine.cycle();
        } catch (e) {
          if (!(e instanceof TmuxError) || e.kind !== 'timeout') throw e;
          if (!toldSlow) process.stderr.write('tma: tmux did not answer in time; skipping this check and trying again\n');
          toldSlow = true;
        }
        if (res) {
          const live = new Set(res.panes.map((o) => o.rec.paneId));
          const step = waiter.step({
            rows: await rowsOf(res, needRepos),
            // One server: the pane id alone names the pane.
            paneAlive: (k) => live.has(k.pane),
            staleHosts: new Set(),
          });
          for (const n of step.notes) process.stderr.write(`tma: ${n}\n`);
          if (step.kind === 'exit') {
            process.stderr.write(`tma: ${step.message}\n`);
            return step.code;
          }
          if (step.kind === 'done') {
            const rows = needRepos ? step.rows : await withRepos(step.rows, cwdOf(res));
            emit(step, json, rows);
            return 0;
          }
        }
        const left = deadline - Date.now();
        if (left <= 0) {
          process.stderr.write(`tma: ${timeoutMessage(spec, timeoutRaw ?? '0')}\n`);
          return 124;
        }
        await sleep(Math.min(TICK_MS, left));
      }
    } finally {
      local.close();
    }
  });
}

