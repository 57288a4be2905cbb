// `tma wait`: run the engine every second on this server (outside tmux with no -L/-S: on every
// server of the user, cli/server-set.ts) and hand each cycle to the shared
// waiter until it reports rows, gives up with an exit code, or the deadline passes.

import type { CycleResult } from '../../collector/engine/cycle.js';
import { TmuxError } from '../../collector/tmux/errors.js';
import { lsTextLine } from '../../shared/ls-text.js';
import { localRowObject, rowsDocument, singleRowDocument, toJsonLine, type AgentRow } from '../../shared/row.js';
import { Waiter, type MemberKey, type Observation, type WaitStep } from '../../shared/wait.js';
import { waitLoop, waitRequestOf } from '../wait-loop.js';
import { type Parsed } from '../args.js';
import type { WAIT } from '../verb-flags.js';
import { guard } from '../local.js';
import { openServerSet } from '../server-set.js';
import { selectorFrom } from '../selector-opts.js';
import { rowsWithRepos } from '../../collector/repo-rows.js';
import { repoOf } from '../../collector/engine/repo.js';

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
    const servers = await openServerSet(p, { mode: 'control' });
    try {
      let toldSlow = false;
      // Each pane's cwd by (server, pane): pane ids repeat across servers.
      let cwds = new Map<string, string>();
      const observe = async (): Promise<Observation<AgentRow> | null> => {
        const rows: AgentRow[] = [];
        const live = new Set<string>();
        const ids = new Set<string>();
        let answered = 0;
        const seen = new Map<string, string>();
        for (const local of await servers.current()) {
          let res: CycleResult;
          try {
            await local.reload();
            res = await local.engine.cycle();
          } catch (e) {
            if (!(e instanceof TmuxError)) throw e;
            if (e.kind === 'server-gone') {
              servers.gone(local, e);
              continue;
            }
            if (e.kind !== 'timeout') throw e;
            if (!toldSlow) process.stderr.write('tma: tmux did not answer in time; skipping this check and trying again\n');
            toldSlow = true;
            return null;
          }
          answered++;
          const server = (await local.engine.server.get()).socketPath;
          for (const o of res.panes) {
            live.add(paneKey(server, o.rec.paneId));
            ids.add(o.rec.paneId);
            seen.set(paneKey(server, o.rec.paneId), o.rec.currentPath);
          }
          rows.push(...(await rowsOf(res, needRepos)));
        }
        // Every server ended during this look: the same end as one server's.
        if (answered === 0) throw new TmuxError('server-gone', '');
        cwds = seen;
        // A pane is named by its server and its id; one never seen yet (server '') by its id anywhere.
        const alive = (k: MemberKey) => (k.server === '' ? ids.has(k.pane) : live.has(paneKey(k.server, k.pane)));
        return { rows, paneAlive: alive, staleHosts: new Set() };
      };
      return await waitLoop(req, new Waiter<AgentRow>(req.spec), observe, async (step) => {
        emit(
          step,
          json,
          needRepos ? step.rows : await Promise.all(step.rows.map(async (r) => ({ ...r, ...(await repoOf(cwds.get(paneKey(r.server, r.pane)) ?? '')) }))),
        );
      });
    } finally {
      servers.close();
    }
  });
}

/** One pane among every server's: the server's socket path, then the pane id. */
const paneKey = (server: string, pane: string) => `${server}\u0000${pane}`;
