// `tma clear-attention PANE`, run by tmux navigation hooks: arriving at a pane (and leaving the
// one you came from) counts as having seen it. Silent, exit 0, like every hook.

import { openRunner } from '../../collector/tmux/runner.js';
import { tmuxBin } from '../../collector/tmux/target.js';
import { KEY } from '../../collector/core/store-codec.js';
import type { Parsed } from '../args.js';
import { targetOf } from '../local.js';

const DEPARTED: Record<string, string> = {
  'after-select-pane': '#{P:#{?pane_last,#{pane_id},}}',
  'session-window-changed': '#{W:#{?window_last_flag,#{P:#{?pane_active,#{pane_id},}},}}',
};

export async function main(p: Parsed): Promise<number> {
  const arrival = p.positionals[0];
  if (!arrival || !/^%\d+$/.test(arrival)) return 0;
  try {
    const runner = await openRunner(targetOf(p), { mode: 'spawn', bin: tmuxBin(process.env) });
    try {
      const panes = [arrival];
      const fmt = DEPARTED[process.env.TMA_HOOK_KIND ?? ''];
      if (fmt) {
        const departed = (await runner.run(['display-message', '-p', '-t', arrival, fmt])).trim();
        if (/^%\d+$/.test(departed) && departed !== arrival) panes.push(departed);
      }
      const cmds = panes.flatMap((pane, i) => [...(i ? [';'] : []), 'set-option', '-p', '-u', '-t', pane, KEY.attention]);
      await runner.run(cmds);
      const watchers = await runner.run(['show-options', '-pqv', '-t', arrival, '@tma_watch_pid']).catch(() => '');
      for (const pid of watchers.split(/\s+/).map(Number)) {
        if (pid > 0) {
          try {
            process.kill(pid, 'SIGUSR1');
          } catch {
            // a watcher that already exited
          }
        }
      }
    } finally {
      runner.close();
    }
  } catch {
    // Navigation must never show an error.
  }
  return 0;
}
