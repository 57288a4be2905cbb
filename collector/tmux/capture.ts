// Reading the screens of the panes a cycle looks at, in one tmux round trip (batch.ts).

import { chainEach } from './batch.js';
import type { TmuxRunner } from './runner-types.js';

/** A pane's last 50 lines (with their colours) and its title, read together. */
export interface Shot {
  tail: string;
  title: string;
}

/**
 * The title is read again next to its screen: the listing's title is a moment older, and an
 * agent that changed both in between (a spinner title and its screen) would otherwise be judged
 * on a new screen under an old title.
 */
function captureCommands(pane: string): string[][] {
  return [
    ['capture-pane', '-p', '-e', '-t', pane, '-S', '-50'],
    ['display-message', '-p', '-t', pane, '#{pane_title}'],
  ];
}

/** Each pane's shot, in order; null for a pane that died since the listing. */
export async function captureScreens(runner: TmuxRunner, panes: readonly string[]): Promise<(Shot | null)[]> {
  const outs = await chainEach(runner, panes.map(captureCommands));
  return outs.map((out) => (out === null ? null : { tail: out[0] ?? '', title: (out[1] ?? '').replace(/\n$/, '') }));
}
