import { pickTargets, type Picked, type TargetPlan } from '../collector/act/targets.js';
import type { Selector } from '../shared/selectors.js';
import type { Local } from './local.js';
import { selectedRows } from '../collector/repo-rows.js';
import { eachCycle, serverFlag } from './servers.js';

/** The panes a verb aimed by `--pane` or by selectors acts on: a named pane as is, else one cycle's matches. */
export async function panesFor(local: Local, plan: Exclude<TargetPlan, { kind: 'usage' }>, sel: Selector, all: boolean): Promise<Picked> {
  if (plan.kind === 'pane') return { kind: 'ok', panes: [plan.pane] };
  return pickTargets(await selectedRows(await local.engine.cycle(), sel), all);
}

/** Panes to act on, each with the server it is on, grouped by server in scan order. */
export type PickedOn = { kind: 'ok'; batches: { local: Local; panes: string[] }[] } | Extract<Picked, { kind: 'fail' }>;

/**
 * The selector's matches over several servers, picked as over one: all of them, or exactly one.
 * Pane ids and locators repeat across servers, so a refusal names each match with its server.
 */
export async function panesAcross(locals: readonly Local[], sel: Selector, all: boolean): Promise<PickedOn> {
  const found = await eachCycle(locals, async (local) => (await selectedRows(await local.engine.cycle(), sel)).map((row) => ({ row, local })));
  const named = found.map((f) => ({ pane: f.row.pane, locator: locals.length > 1 ? `${f.row.locator} on ${serverFlag(f.row.server)}` : f.row.locator }));
  const picked = pickTargets(named, all);
  if (picked.kind === 'fail') return picked;
  // pickTargets keeps the rows' order and takes all or the only one: the matches themselves.
  const chosen = all ? found : found.slice(0, 1);
  const batches: { local: Local; panes: string[] }[] = [];
  for (const f of chosen) {
    const b = batches.find((x) => x.local === f.local);
    if (b) b.panes.push(f.row.pane);
    else batches.push({ local: f.local, panes: [f.row.pane] });
  }
  return { kind: 'ok', batches };
}
