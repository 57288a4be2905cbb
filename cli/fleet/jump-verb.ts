// `tma --hub URL jump --host H --pane ID`: go to an agent's pane on another host. Inside tmux, a new
// window of the current server runs ssh to that host, attaching to the pane's session with its
// window and pane selected; outside tmux, the ssh command is run here on a terminal, or printed.
//
// The destination is this machine's `[hosts.NAME] ssh` (config.toml) if set, else the hub's
// `[[ssh]]` entry for that host (user, host, port: the hub never hands out a key).

import { openRunner } from '../../collector/tmux/runner.js';
import { tmuxBin } from '../../collector/tmux/target.js';
import type { FleetDocument } from '../../shared/fleet.js';
import { parseLocator } from '../../shared/jump-plan.js';
import { isEmptySelector } from '../../shared/selectors.js';
import { safeText } from '../../shared/terminal-text.js';
import { UsageError, type Parsed } from '../args.js';
import type { JUMP } from '../verb-flags.js';
import { ExitError, guard, loadLocalConfig, targetOf } from '../local.js';
import { selectorFrom } from '../selector-opts.js';
import { pickRow } from './act-verb.js';
import { getJson, hubTarget } from './hub-client.js';
import { runSsh } from './run-ssh.js';
import { HOW_TO_ADD, shq, sshArgv, sshWay } from './ssh-jump.js';

export async function main(p: Parsed<typeof JUMP>): Promise<number> {
  if (p.positionals.length) throw new UsageError(`jump takes no arguments, got ${p.positionals.join(' ')}`);
  for (const m of ['attention', 'blocked', 'next', 'back', 'home', 'menu'] as const)
    if (p.opts[m] !== undefined) throw new UsageError(`--${m} works on this machine's tmux; with --hub, jump takes --host and --pane`);
  const sel = selectorFrom(p, { fleet: true });
  const pane = p.opts.pane;
  if (pane === undefined) throw new UsageError('jump with --hub needs --pane (and --host when the id is on several hosts)');
  if (!/^%\d+$/.test(pane)) throw new UsageError(`--pane takes a pane id like %3, got "${pane}"`);
  if (!isEmptySelector({ ...sel, host: null })) throw new UsageError('--pane cannot be combined with selector flags other than --host');
  const t = hubTarget(p, process.env);
  return guard(async () => {
    const config = await loadLocalConfig(p);
    const doc = await getJson<FleetDocument>(t, '/v1/agents');
    const picked = pickRow(doc.agents, { pane, host: p.opts.host ?? null, server: p.opts.server ?? null });
    if (picked.kind === 'fail') throw new ExitError(picked.message, picked.code);
    const row = picked.row;
    const way = await sshWay(t, config, row.host);
    if (way === null) throw new ExitError(HOW_TO_ADD(row.host), 1);
    const argv = sshArgv(way, row);
    const line = argv.map(shq).join(' ');
    if (process.env.TMUX) {
      const runner = await openRunner(targetOf(p), { mode: 'spawn', bin: tmuxBin(process.env, config.tmuxBin) });
      try {
        const loc = parseLocator(row.locator);
        // tmux paints a window name in the status line: host text there is made inert too.
        await runner.run(['new-window', '-n', safeText(`${row.host}:${loc?.session ?? row.pane}`), line]);
      } finally {
        runner.close();
      }
      return 0;
    }
    if (!process.stdin.isTTY || !process.stdout.isTTY) {
      // The locator is the host's text: the command is shown with its controls made visible.
      process.stdout.write(`${safeText(line, 4096)}\n`);
      return 0;
    }
    return runSsh(argv);
  });
}
