// `tma mute`: silence notifications for agent panes for a while, indefinitely, or no longer.
// Detection and every surface except the row's `muted` key are unaffected.

import { MUTE_SENTINEL, muteUntil } from '../../collector/act/mute-duration.js';
import { planTargets } from '../../collector/act/targets.js';
import { chain } from '../../collector/core/stamp-render.js';
import { KEY } from '../../collector/core/store-codec.js';
import { isEmptySelector } from '../../shared/selectors.js';
import { UsageError, type Parsed } from '../args.js';
import type { MUTE } from '../verb-flags.js';
import { muteWindowOf } from '../mute-window.js';
import { ExitError, guard } from '../local.js';
import { agentServersHint, openForPane, openLocals } from '../servers.js';
import { selectorFrom } from '../selector-opts.js';
import { panesFor } from '../targets.js';

export async function main(p: Parsed<typeof MUTE>): Promise<number> {
  if (p.positionals.length) throw new UsageError(`unexpected argument "${p.positionals[0]}"`);
  const sel = selectorFrom(p, { fleet: false });
  const { clear, window } = muteWindowOf(p);
  const pane = p.opts.pane ?? null;
  // Mute has no --all: a selector already means every match.
  const plan = planTargets({ pane, selectorEmpty: isEmptySelector(sel), all: false, tmuxPane: process.env.TMUX_PANE ?? null });
  if (plan.kind === 'usage') throw new UsageError(plan.message);

  return guard(
    async () => {
      // A pane id names one server (outside tmux: whichever holds that agent); a selector covers them all.
      const locals = plan.kind === 'pane' ? [await openForPane(p, plan.pane)] : await openLocals(p);
      try {
        // One clock read for every target, so a batch mutes until one instant.
        const value = window === null ? MUTE_SENTINEL : muteUntil(Date.now(), window.ms);
        const done: string[] = [];
        let miss: string | null = null;
        for (const local of locals) {
          const picked = await panesFor(local, plan, sel, true);
          if (picked.kind === 'fail') {
            miss = picked.message;
            continue;
          }
          const panes = picked.panes;
          const cmds = panes.map((t) =>
            clear ? ['set-option', '-p', '-u', '-t', t, KEY.muteUntil] : ['set-option', '-p', '-t', t, KEY.muteUntil, String(value)],
          );
          await local.engine.runner.run(chain(cmds));
          done.push(...panes);
        }
        if (done.length === 0) throw new ExitError(miss ?? 'no agent pane matches', 3);
        const what = clear ? 'unmuted' : window === null ? 'muted indefinitely' : `muted for ${window.label}`;
        process.stdout.write(`tma: ${what}: ${done.join(' ')}\n`);
        return 0;
      } finally {
        for (const l of locals) l.close();
      }
    },
    () => agentServersHint(p, null),
  );
}
