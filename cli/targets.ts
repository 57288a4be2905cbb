import { pickTargets, type Picked, type TargetPlan } from '../collector/act/targets.js';
import type { Selector } from '../shared/selectors.js';
import type { Local } from './local.js';
import { selectedRows } from '../collector/repo-rows.js';

/** The panes a verb aimed by `--pane` or by selectors acts on: a named pane as is, else one cycle's matches. */
export async function panesFor(local: Local, plan: Exclude<TargetPlan, { kind: 'usage' }>, sel: Selector, all: boolean): Promise<Picked> {
  if (plan.kind === 'pane') return { kind: 'ok', panes: [plan.pane] };
  return pickTargets(await selectedRows(await local.engine.cycle(), sel), all);
}
