// One claude pane (%1, a bash with claude in the foreground) for unit tests of a single engine
// cycle against a fake tmux runner: its listing line and an engine whose process walk finds it.

import { Engine } from '../../collector/engine/cycle.js';
import { OPTION_KEYS, SEP } from '../../collector/engine/pane-list.js';
import { loadAgentManifests } from '../../collector/manifest-files.js';
import { DEFAULT_FOLD } from '../../collector/core/types.js';
import type { TmuxRunner } from '../../collector/tmux/runner.js';

export const PANE_PID = 100;
export const AGENT_PID = 200;

/** The pane's `list-panes` line, with these pane options set and this title. */
export function paneListing(title: string, options: Record<string, string> = {}): string {
  const fields = ['%1', String(PANE_PID), 'main', '0', '0', 'claude', '0', '0', '', '24', '/src'];
  return [...fields, ...OPTION_KEYS.map((k) => options[k] ?? ''), '', '', title].join(SEP) + '\n';
}

/** A one-shot engine over `runner`, with the bundled manifests and default fold. */
export function claudeEngine(runner: TmuxRunner, now: () => number): Engine {
  return new Engine({
    runner,
    manifests: loadAgentManifests({ env: {} }).manifests,
    fold: DEFAULT_FOLD,
    host: 'h',
    readProcs: async () => [
      { pid: PANE_PID, ppid: 1, pgid: PANE_PID, tpgid: AGENT_PID, comm: 'bash' },
      { pid: AGENT_PID, ppid: PANE_PID, pgid: AGENT_PID, tpgid: AGENT_PID, comm: 'claude' },
    ],
    now,
  });
}
