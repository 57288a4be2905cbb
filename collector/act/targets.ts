// Which panes a fire (or a mute) is aimed at. Pure: the caller runs the cycle and hands the rows.

export type TargetPlan = { kind: 'pane'; pane: string } | { kind: 'select' } | { kind: 'usage'; message: string };

/**
 * An explicit pane wins; with neither `--all` nor a selector the caller means "this pane"
 * ($TMUX_PANE); otherwise targets come from one cycle, narrowed by the selector.
 */
export function planTargets(i: { pane: string | null; selectorEmpty: boolean; all: boolean; tmuxPane: string | null }): TargetPlan {
  if (i.pane !== null) {
    if (!i.selectorEmpty) return { kind: 'usage', message: '--pane cannot be combined with selector flags' };
    if (i.all) return { kind: 'usage', message: '--pane cannot be combined with --all' };
    return { kind: 'pane', pane: i.pane };
  }
  if (!i.all && i.selectorEmpty) {
    if (i.tmuxPane === null || i.tmuxPane === '') return { kind: 'usage', message: 'no target: give --pane, a selector, or run inside tmux' };
    return { kind: 'pane', pane: i.tmuxPane };
  }
  return { kind: 'select' };
}

export type Picked = { kind: 'ok'; panes: string[] } | { kind: 'fail'; code: number; message: string };

/** From the selected rows (already in surface order): all of them, or exactly one. */
export function pickTargets(rows: readonly { pane: string; locator: string }[], all: boolean): Picked {
  if (all) {
    if (rows.length === 0) return { kind: 'fail', code: 2, message: 'nothing to act on: no agent pane matches' };
    return { kind: 'ok', panes: rows.map((r) => r.pane) };
  }
  if (rows.length === 0) return { kind: 'fail', code: 3, message: 'no agent pane matches' };
  if (rows.length > 1) {
    const names = rows.map((r) => `${r.pane} (${r.locator})`).join(', ');
    return { kind: 'fail', code: 1, message: `more than one agent pane matches: ${names}; narrow the selector or pass --all` };
  }
  return { kind: 'ok', panes: [rows[0]!.pane] };
}
