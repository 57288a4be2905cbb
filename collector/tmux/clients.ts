// Which panes someone is looking at: an attached (non-control) client shows its session's current
// window's active pane, and its user typed within the window given (client_activity moves on
// input; attaching counts). The collector's own control-mode client never counts.

import type { TmuxRunner } from './runner-types.js';

export const LOOKING_WITHIN_MS = 30_000;

const FORMAT = '#{client_control_mode}\t#{client_activity}\t#{pane_id}';

/** Panes shown to a client whose user was active within `withinMs` of `nowMs`. */
export async function panesInView(runner: TmuxRunner, nowMs: number, withinMs = LOOKING_WITHIN_MS): Promise<Set<string>> {
  const out = await runner.run(['list-clients', '-F', FORMAT], { timeoutMs: 2000 });
  const seen = new Set<string>();
  for (const line of out.split('\n')) {
    const [control, activity, pane] = line.split('\t');
    if (control !== '0' || !pane || !/^%\d+$/.test(pane)) continue;
    const age = nowMs - Number(activity) * 1000;
    // client_activity has whole seconds: allow the second it is in.
    if (Number.isFinite(age) && age < withinMs + 1000) seen.add(pane);
  }
  return seen;
}
