// `tma jump`: take the acting client to the agent that needs it (or the next one), remembering
// where it came from so `--back` and `--home` return. Success prints nothing.

import {
  homeOf,
  menuOrder,
  menuTimeoutMs,
  parseLocator,
  pickAttention,
  pickBlocked,
  pickNext,
  popTrail,
  pushTrail,
  trailOption,
} from '../../shared/jump-plan.js';
import type { AgentRow } from '../../shared/row.js';
import { selectRow } from '../../shared/selectors.js';
import { KEY } from '../../collector/core/store-codec.js';
import type { TmuxRunner } from '../../collector/tmux/runner.js';
import { TmuxError } from '../../collector/tmux/errors.js';
import { targetFlags } from '../../collector/tmux/target.js';
import { UsageError, type Parsed } from '../args.js';
import type { JUMP } from '../verb-flags.js';
import { tmaBin } from '../install/paths.js';
import { ExitError, guard, openLocal, timedCycle } from '../local.js';
import { selectorFrom } from '../selector-opts.js';

const MODES = ['attention', 'blocked', 'next', 'back', 'home', 'pane', 'menu'] as const;
type Mode = (typeof MODES)[number];

const GLYPH: Record<string, string> = { blocked: '⚑', working: '●', idle: '○', unknown: '?' };

function age(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  return s < 60 ? `${s}s` : s < 3600 ? `${Math.floor(s / 60)}m` : `${Math.floor(s / 3600)}h`;
}

export async function main(p: Parsed<typeof JUMP>): Promise<number> {
  if (p.positionals.length) throw new UsageError(`jump takes no arguments, got ${p.positionals.join(' ')}`);
  const given = MODES.filter((m) => p.opts[m] !== undefined);
  if (given.length > 1) throw new UsageError(`choose one of ${given.map((m) => `--${m}`).join(', ')}`);
  const mode: Mode = given[0] ?? 'next';
  const sel = selectorFrom(p, { fleet: false });
  const raw = p.opts.client;
  const client = raw && !raw.includes('#{') ? raw : null;
  if (p.opts['menu-timeout'] !== undefined && mode !== 'menu') throw new UsageError('--menu-timeout goes with --menu');
  let menuMs = 0;
  try {
    menuMs = menuTimeoutMs(p.opts['menu-timeout'], process.env.TMA_JUMP_MENU_TIMEOUT);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const scoped = sel.agent || sel.session || sel.repo || sel.branch || sel.states.length ? ' in scope' : '';
  return guard(async () => {
    const local = await openLocal(p);
    const runner = local.engine.runner;
    try {
      const withClient = (args: string[]) => (client ? [...args.slice(0, 1), '-c', client, ...args.slice(1)] : args);
      const display = async (fmt: string) => (await runner.run(withClient(['display-message', '-p', fmt]))).replace(/\n$/, '');
      const origin = await display('#{session_name}:#{window_index}.#{pane_index}').catch(() => '');
      const clientName = client ?? (await display('#{client_name}').catch(() => ''));
      const option = trailOption(clientName);
      const readTrail = async () =>
        (await runner.run(['show-options', '-sqv', option]).catch(() => ''))
          .split('\n')
          .map((l) => l.trim())
          .filter(Boolean);
      const saveTrail = async (t: string[]) =>
        t.length ? runner.run(['set-option', '-s', option, t.join('\n')]) : runner.run(['set-option', '-su', option]).catch(() => '');

      if (mode === 'back' || mode === 'home') {
        const trail = await readTrail();
        const to = mode === 'back' ? popTrail(trail) : { to: homeOf(trail), rest: [] };
        if (!to.to) {
          process.stderr.write('tma: no jump origin recorded\n');
          return 0;
        }
        await saveTrail(to.rest);
        await focus(runner, client, parseLocator(to.to)!, to.to);
        return 0;
      }

      const res = await timedCycle(p, local.engine);
      const rows = res.rows.filter((r) => selectRow(sel, r));
      if (mode === 'menu') return await menu(runner, client, rows, origin, local.target, menuMs);
      let target: AgentRow | null;
      if (mode === 'pane') {
        const id = p.opts.pane!;
        target = res.rows.find((r) => r.pane === id) ?? null;
        if (!target) {
          process.stderr.write(`tma: no agent in pane ${id}\n`);
          return 0;
        }
      } else {
        target = mode === 'attention' ? pickAttention(rows, origin) : mode === 'blocked' ? pickBlocked(rows) : pickNext(rows, origin);
        if (!target) {
          const what = mode === 'attention' ? 'no agents waiting for you' : mode === 'blocked' ? 'no blocked agents' : 'no agents to jump to';
          process.stderr.write(`tma: ${what}${scoped}\n`);
          return 0;
        }
      }
      if (parseLocator(origin)) await saveTrail(pushTrail(await readTrail(), origin));
      await focus(runner, client, parseLocator(target.locator)!, target.pane);
      if (mode !== 'next') await runner.run(['set-option', '-p', '-u', '-t', target.pane, KEY.attention]).catch(() => '');
      return 0;
    } finally {
      local.close();
    }
  });
}

async function focus(runner: TmuxRunner, client: string | null, loc: { session: string; window: number }, pane: string): Promise<void> {
  const win = `${loc.session}:${loc.window}`;
  await runner.run(client ? ['switch-client', '-c', client, '-t', `=${loc.session}`] : ['switch-client', '-t', `=${loc.session}`]);
  const active = (await runner.run(['display-message', '-p', '-t', `=${win}`, '#{window_active}'])).trim();
  if (active !== '1') await runner.run(['select-window', '-t', `=${win}`]);
  await runner.run(['select-pane', '-t', pane]);
}

async function menu(
  runner: TmuxRunner,
  client: string | null,
  rows: AgentRow[],
  origin: string,
  target: Parameters<typeof targetFlags>[0],
  timeoutMs: number,
): Promise<number> {
  const list = menuOrder(rows.filter((r) => r.locator !== origin));
  if (list.length === 0) {
    process.stderr.write('tma: no agents\n');
    return 0;
  }
  const pane = client ? (await runner.run(['display-message', '-p', '-c', client, '#{pane_id}']).catch(() => '')).trim() : (process.env.TMUX_PANE ?? '');
  if (!pane) throw new ExitError('no attached client to show the jump menu on', 1);
  const q = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;
  const server = targetFlags(target).map(q).join(' ');
  const now = Date.now();
  const items = list.flatMap((r, i) => {
    const label = `${GLYPH[r.state] ?? '?'} ${r.agent.padEnd(10)} ${r.locator.padEnd(20)} ${age(now - r.since_ms)}`.replaceAll('#', '##');
    const cmd = `run-shell "${q(tmaBin(process.env))} ${server} jump --pane ${r.pane}${client ? ` --client ${q(client)}` : ''}"`;
    return [label, i < 9 ? String(i + 1) : '', cmd];
  });
  // tmux answers display-menu only once the menu closes: wait as long as the bound allows, then
  // take the menu down ourselves, so nothing is left on the screen that no process answers for.
  try {
    await runner.run([...(client ? ['display-menu', '-c', client] : ['display-menu']), '-t', pane, '-T', 'tma jump', ...items], { timeoutMs });
  } catch (e) {
    if (!(e instanceof TmuxError) || e.kind !== 'timeout') throw e;
    // display-popup -C clears whatever overlay the client shows, the menu included (tmux ≥ 3.2).
    await runner.run(client ? ['display-popup', '-C', '-c', client] : ['display-popup', '-C', '-t', pane]).catch(() => '');
    process.stderr.write(`tma: jump menu closed after ${timeoutMs / 1000} s with nothing chosen\n`);
  }
  return 0;
}
