// `tma wait`: run the engine every second on this server and hand each cycle to the shared
// waiter until it reports rows, gives up with an exit code, or the deadline passes.

import type { CycleResult } from '../../collector/engine/cycle.js';
import { TmuxError } from '../../collector/tmux/errors.js';
import { lsTextLine } from '../../shared/ls-text.js';
import { localRowObject, rowsDocument, singleRowDocument, toJsonLine, type AgentRow } from '../../shared/row.js';
import { Waiter, type Observation, type WaitStep } from '../../shared/wait.js';
import { waitLoop, waitRequestOf } from '../wait-loop.js';
import { type Parsed } from '../args.js';
import type { WAIT } from '../verb-flags.js';
import { guard, openLocal } from '../local.js';
import { selectorFrom } from '../selector-opts.js';
import { cwdOf, rowsWithRepos, withRepos } from '../../collector/repo-rows.js';

/**
 * Rows with their repo trio, resolved each tick only when the selector filters on it; otherwise
 * only the rows that end the wait get one, at emit.
 */
async function rowsOf(res: CycleResult, needRepos: boolean): Promise<AgentRow[]> {
  if (!needRepos) return res.rows;
  return rowsWithRepos(res);
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

export async function main(p: Parsed<typeof WAIT>): Promise<number> {
  const sel = selectorFrom(p, { fleet: false });
  const req = waitRequestOf(p, sel);
  const json = p.opts.json === true;
  const needRepos = sel.repo !== null || sel.branch !== null;

  return guard(async () => {
    const local = await openLocal(p, { mode: 'control' });
    try {
      let toldSlow = false;
      let res: CycleResult | null = null;
      const observe = async (): Promise<Observation<AgentRow> | null> => {
        try {
          await local.reload();
          res = await local.engine.cycle();
        } catch (e) {
          if (!(e instanceof TmuxError) || e.kind !== 'timeout') throw e;
          if (!toldSlow) process.stderr.write('tma: tmux did not answer in time; skipping this check and trying again\n');
          toldSlow = true;
          return null;
        }
        const live = new Set(res.panes.map((o) => o.rec.paneId));
        // One server: the pane id alone names the pane.
        return { rows: await rowsOf(res, needRepos), paneAlive: (k) => live.has(k.pane), staleHosts: new Set() };
      };
      return await waitLoop(req, new Waiter<AgentRow>(req.spec), observe, async (step) => {
        emit(step, json, needRepos ? step.rows : await withRepos(step.rows, cwdOf(res!)));
      });
    } finally {
      local.close();
    }
  });
}
