// `tma act --menu [--pane ID]`: the actions that would fire on a pane, and why each other one
// would not, judged by the broker's pre-check on the stamp as stored. Bound to prefix+A, where it
// runs under tmux's run-shell with no terminal: it opens a tmux menu on the pane, whose fireable
// entries ask for a y first (confirm-before) and then run `tma act NAME --pane ID` bound to the
// prompt the menu showed. On a terminal it lists them and asks there instead.
// With `--hub URL --host H --pane ID` the pane's own host judges (POST /v1/preview, the fleet
// dry run's question) and a choice runs the fleet act (`tma --hub … act NAME --host …`), bound
// to the prompt the list showed; it needs a terminal, since a tmux menu here is not on that host.

import { createInterface } from 'node:readline';
import { randomBytes } from 'node:crypto';
import { hostName } from '../../collector/tmux/host.js';
import { targetFlags } from '../../collector/tmux/target.js';
import { UsageError, type Parsed } from '../args.js';
import type { ACT } from '../verb-flags.js';
import { ExitError, guard, openLocal } from '../local.js';
import { tmaBin } from '../install/paths.js';
import { preview } from '../fleet/act-preview.js';
import { pickRow } from '../fleet/act-verb.js';
import { getJson, hubTarget, selectorQuery } from '../fleet/hub-client.js';
import type { FleetDocument } from '../../shared/fleet.js';
import { loadActionList, localMenu } from '../watch/menu-items.js';
import { verbOf, type MenuItem } from '../watch/model.js';
import { clean, fit } from '../watch/render.js';
import { safeLines, safeText } from '../../shared/terminal-text.js';
import { fromFleet, fromLocal, type WatchRow } from '../watch/rows.js';
import { binderFlags, outcomeWord, runTma } from '../watch/source.js';

const ALLOWED = new Set(['menu', 'pane']);
const FLEET_ALLOWED = new Set(['menu', 'pane', 'host', 'server']);

const q = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;
/** Text tmux shows (a menu label, a prompt): controls made visible, and `#` would start a format. */
const shown = (s: string) => safeText(s).replaceAll('#', '##');

/** One line for tmux's prompt (the status line is as wide as the client): what is asked gives way first. */
export function confirmPrompt(item: MenuItem, row: WatchRow): string {
  const asks = fit(clean(row.pending_summary ?? row.detail ?? 'nothing stated'), 40);
  return `${verbOf(item.action)} ${clean(row.agent)} on ${clean(row.host)} ${clean(row.locator)} (${row.pane})? asks: ${asks} (y/n)`;
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
        process.stderr.write(safeLines(`tma: no action would fire on ${pane}\n${items.map((i) => `  ${i.action}: ${i.refusal}\n`).join('')}`));
        return 0;
      }
      const config = p.globals.config;
      const server = [...targetFlags(local.target), ...(config ? ['--config', config] : [])];
      const slot = () => `menu-${randomBytes(9).toString('hex')}`;
      const fire = (it: MenuItem) => runTma([...server, 'act', it.action, '--pane', row.pane, ...binderFlags(row, slot())]);
      if (process.stdin.isTTY && process.stdout.isTTY) return await onTerminal(items, row, fire);
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

/** The list on a terminal, one choice, a y, then `fire`: the act command itself, as a child. */
async function onTerminal(
  items: MenuItem[],
  row: WatchRow,
  fire: (item: MenuItem) => Promise<{ code: number; stdout: string; stderr: string }>,
): Promise<number> {
  // Locator, host and a host's refusal text are remote text: every line goes out made inert.
  const out = { write: (s: string) => process.stdout.write(safeLines(s)) };
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
    const res = await fire(item);
    out.write(`${item.action} ${row.pane}: ${outcomeWord(res)}\n`);
    return res.code;
  } finally {
    rl.close();
  }
}

/** `tma --hub URL act --menu --host H --pane ID`: judged on the pane's host, fired through the hub. */
export async function fleetMain(p: Parsed<typeof ACT>): Promise<number> {
  const extra = Object.keys(p.opts).filter((k) => !FLEET_ALLOWED.has(k) && p.opts[k as keyof typeof p.opts] !== undefined);
  if (extra.length) throw new UsageError(`--menu cannot be combined with --${extra[0]}`);
  if (p.positionals.length) throw new UsageError('--menu takes no action name');
  const pane = p.opts.pane;
  if (pane === undefined) throw new UsageError('act --menu with --hub needs --pane ID (and --host H)');
  if (!/^%\d+$/.test(pane)) throw new UsageError(`--pane takes a pane id like %3, got "${pane}"`);
  const t = hubTarget(p, process.env);
  return guard(async () => {
    const doc = await getJson<FleetDocument>(t, '/v1/agents', selectorQuery(p));
    const picked = pickRow(doc.agents, { pane, host: p.opts.host ?? null, server: p.opts.server ?? null });
    if (picked.kind === 'fail') throw new ExitError(picked.message, picked.code);
    const host = doc.hosts.find((h) => h.host === picked.row.host);
    const row = fromFleet(picked.row, host?.clock_offset_ms ?? 0, host?.stale === true);
    // Every action the host allows a hub, each judged there now; none is sent.
    const verdicts = await preview(t, picked.row, null);
    if (!verdicts.found) throw new ExitError(`pane ${pane} is gone on ${row.host}`, 3);
    const items: MenuItem[] = verdicts.actions.map((v) => ({
      action: v.name,
      label: v.name[0]!.toUpperCase() + v.name.slice(1),
      refusal: v.fireable ? null : (v.reason ?? 'unknown'),
    }));
    if (!items.some((i) => i.refusal === null)) {
      const why = items.length
        ? items.map((i) => `  ${i.action}: ${i.refusal}\n`).join('')
        : `  ${row.host} lets a hub fire no action ([remote] allow_actions)\n`;
      process.stderr.write(safeLines(`tma: no action would fire on ${row.host} ${pane}\n${why}`));
      return 0;
    }
    if (!process.stdin.isTTY || !process.stdout.isTTY) throw new ExitError('act --menu with --hub needs a terminal to choose on', 2);
    const tokenFile = p.globals['token-file'];
    const hub = ['--hub', t.base.origin, ...(tokenFile ? ['--token-file', tokenFile] : [])];
    const slot = `menu-${randomBytes(9).toString('hex')}`;
    // The fleet act: the hub's slot makes a retry replay, the binders refuse a prompt that changed.
    const fire = (it: MenuItem) =>
      runTma([
        ...hub,
        'act',
        it.action,
        '--host',
        row.host,
        '--server',
        row.server,
        '--pane',
        row.pane,
        ...binderFlags(row, slot).filter((f) => f !== '--yes'),
      ]);
    return onTerminal(items, row, fire);
  });
}
