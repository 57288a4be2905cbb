// `tma act --menu [--pane ID]`: the actions that would fire on a pane, and why each other one
// would not, judged by the broker's pre-check on the stamp as stored. Bound to prefix+A, where it
// runs under tmux's run-shell with no terminal: it opens a tmux menu on the pane, whose fireable
// entries ask for a y first (confirm-before) and then run `tma act NAME --pane ID` bound to the
// prompt the menu showed. On a terminal it lists them and asks there instead.

import { createInterface } from 'node:readline';
import { randomBytes } from 'node:crypto';
import { hostName } from '../../collector/tmux/host.js';
import { targetFlags } from '../../collector/tmux/target.js';
import { UsageError, type Parsed } from '../args.js';
import type { ACT } from '../verb-flags.js';
import { ExitError, guard, openLocal } from '../local.js';
import { tmaBin } from '../install/paths.js';
import { loadActionList, localMenu } from '../watch/menu-items.js';
import { verbOf, type MenuItem } from '../watch/model.js';
import { clean, fit } from '../watch/render.js';
import { fromLocal, type WatchRow } from '../watch/rows.js';
import { binderFlags, outcomeWord, runTma } from '../watch/source.js';

const ALLOWED = new Set(['menu', 'pane']);

const q = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;
/** Text tmux shows (a menu label, a prompt): `#` would start a format. */
const shown = (s: string) => s.replace(/[\u0000-\u001f\u007f]/g, ' ').replaceAll('#', '##');

/** One line for tmux's prompt (the status line is as wide as the client): what is asked gives way first. */
export function confirmPrompt(item: MenuItem, row: WatchRow): string {
  const asks = fit(clean(row.pending_summary ?? row.detail ?? 'nothing stated'), 40);
  return `${verbOf(item.action)} ${row.agent} on ${row.host} ${row.locator} (${row.pane})? asks: ${asks} (y/n)`;
}

/** display-menu's arguments: fireable entries confirm, then act; the others are shown disabled with why. */
export function menuArgs(items: readonly MenuItem[], row: WatchRow, actArgv: (item: MenuItem) => string[]): string[] {
  const out: string[] = [];
  items.forEach((it, i) => {
    if (it.refusal !== null) {
      // The reason's token only: a menu line is as wide as the client, and tmux cuts long ones.
      out.push(`-${shown(`${it.label}: ${it.refusal.split(' (')[0]}`)}`, '', '');
      return;
    }
    const run = `run-shell -b ${q(actArgv(it).map(q).join(' '))}`;
    out.push(shown(it.label), i < 9 ? String(i + 1) : '', `confirm-before -p ${q(shown(confirmPrompt(it, row)))} ${q(run)}`);
  });
  return out;
}

export async function main(p: Parsed<typeof ACT>): Promise<number> {
  const extra = Object.keys(p.opts).filter((k) => !ALLOWED.has(k) && p.opts[k as keyof typeof p.opts] !== undefined);
  if (extra.length) throw new UsageError(`--menu cannot be combined with --${extra[0]}`);
  if (p.positionals.length) throw new UsageError('--menu takes no action name');
  const pane = p.opts.pane ?? process.env.TMUX_PANE ?? null;
  if (!pane) throw new UsageError('act --menu needs --pane ID (or run it inside tmux)');
  return guard(async () => {
    const local = await openLocal(p, { quietManifests: true });
    try {
      const res = await local.engine.cycle();
      const agentRow = res.rows.find((r) => r.pane === pane);
      if (!agentRow) {
        const alive = res.panes.some((o) => o.rec.paneId === pane);
        throw new ExitError(alive ? `no agent in pane ${pane}` : `pane ${pane} is gone`, 3);
      }
      const row = { ...fromLocal(agentRow), host: hostName() };
      const items = await localMenu(local.engine, local.config.apiBase, pane, loadActionList(process.env));
      if (items === null) throw new ExitError(`pane ${pane} is gone`, 3);
      if (!items.some((i) => i.refusal === null)) {
        process.stderr.write(`tma: no action would fire on ${pane}\n${items.map((i) => `  ${i.action}: ${i.refusal}\n`).join('')}`);
        return 0;
      }
      const config = p.globals.config;
      const server = [...targetFlags(local.target), ...(config ? ['--config', config] : [])];
      const slot = () => `menu-${randomBytes(9).toString('hex')}`;
      if (process.stdin.isTTY && process.stdout.isTTY) return await onTerminal(items, row, server, slot());
      const bin = tmaBin(process.env);
      const exe = bin.endsWith('.js') ? [process.execPath, bin] : [bin];
      const args = menuArgs(items, row, (it) => [...exe, ...server, 'act', it.action, '--pane', pane, ...binderFlags(row, slot())]);
      const title = shown(`tma act: ${row.agent} ${row.locator}`);
      try {
        // tmux answers display-menu once the menu closes: wait as long as a person might look at it.
        await local.engine.runner.run(['display-menu', '-t', pane, '-T', title, ...args], { timeoutMs: 600_000 });
      } catch (e) {
        throw new ExitError(`cannot show the menu: ${(e as Error).message}`, 1);
      }
      return 0;
    } finally {
      local.close();
    }
  });
}

async function onTerminal(items: MenuItem[], row: WatchRow, server: string[], slot: string): Promise<number> {
  const out = process.stdout;
  out.write(`actions for ${row.agent} on ${row.host} ${row.locator} (${row.pane}):\n`);
  items.forEach((it, i) => out.write(`  ${i + 1}. ${it.label} (${it.action})${it.refusal === null ? '' : ` — would not fire: ${it.refusal}`}\n`));
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  const question = (t: string) => new Promise<string>((done) => rl.question(t, done));
  try {
    const pick = (await question('choose a number (anything else cancels): ')).trim();
    const item = items[Number(pick) - 1];
    if (!/^\d+$/.test(pick) || item === undefined) {
      out.write('cancelled\n');
      return 0;
    }
    if (item.refusal !== null) {
      out.write(`${item.action} would not fire: ${item.refusal}; nothing sent\n`);
      return 0;
    }
    const yes = (await question(`${confirmPrompt(item, row).replace(/\(y\/n\)$/, '[y/N]')} `)).trim();
    if (!/^y(es)?$/i.test(yes)) {
      out.write('cancelled\n');
      return 0;
    }
    const res = await runTma([...server, 'act', item.action, '--pane', row.pane, ...binderFlags(row, slot)]);
    out.write(`${item.action} ${row.pane}: ${outcomeWord(res)}\n`);
    return res.code;
  } finally {
    rl.close();
  }
}
