// `tma jump`: take the acting client to the agent that needs it (or the next one), remembering
// where it came from so `--back` and `--home` return. Success prints nothing. Outside tmux with
// no -L/-S it looks at every tmux server of the user and moves the client on the agent's server.

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
import { ExitError, guard, timedCycle, type Local } from '../local.js';
import { agentServersHint, eachCycle, openLocals, serverFlag } from '../servers.js';
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
  return guard(
    async () => {
      const locals = await openLocals(p);
      try {
        const seats = await Promise.all(locals.map((l) => seatOf(l, client)));
        // Where the person is: the server that shows the client (inside tmux, the only one).
        const home = seats.find((x) => parseLocator(x.origin)) ?? seats[0]!;

        if (mode === 'back' || mode === 'home') {
          // A client's trail is kept on its own server: the first server holding one is where to return.
          for (const seat of seats) {
            const trail = await seat.readTrail();
            const to = mode === 'back' ? popTrail(trail) : { to: homeOf(trail), rest: [] };
            if (!to.to) continue;
            await seat.saveTrail(to.rest);
            await focus(seat.local.engine.runner, client, parseLocator(to.to)!, to.to);
            return 0;
          }
          process.stderr.write('tma: no jump origin recorded\n');
          return 0;
        }

        const found = await eachCycle(locals, async (l) => {
          const seat = seats[locals.indexOf(l)]!;
          return (await timedCycle(p, l.engine)).rows.map((row) => ({ row, seat }));
        });
        if (mode === 'menu') {
          // A menu shows on one client, and its choices can only move that client: its server's agents.
          const rows = found.filter((f) => f.seat === home && selectRow(sel, f.row)).map((f) => f.row);
          return await menu(home.local.engine.runner, client, rows, home.origin, home.local.target, menuMs);
        }
        let picked: Found | null;
        if (mode === 'pane') {
          const id = p.opts.pane!;
          const holders = found.filter((f) => f.row.pane === id);
          if (holders.length > 1) {
            const names = holders.map((f) => serverFlag(f.row.server)).join(', ');
            throw new ExitError(`pane ${id} is an agent pane on ${holders.length} tmux servers (${names}): name one with -L or -S`, 1);
          }
          picked = holders[0] ?? null;
          if (!picked) {
            process.stderr.write(`tma: no agent in pane ${id}\n`);
            return 0;
          }
        } else {
          picked = pickAcross(
            found.filter((f) => selectRow(sel, f.row)),
            seats,
            home,
            mode,
          );
          if (!picked) {
            const what = mode === 'attention' ? 'no agents waiting for you' : mode === 'blocked' ? 'no blocked agents' : 'no agents to jump to';
            process.stderr.write(`tma: ${what}${scoped}\n`);
            return 0;
          }
        }
        const { row: target, seat } = picked;
        // A client belongs to one server: the one moved is the client on the agent's server.
        if (seats.length > 1 && !seat.attached) {
          throw new ExitError(
            `${client ? `client ${client} is not` : 'no tmux client is'} attached to ${serverFlag(target.server)}, where ${target.pane} runs: attach one there`,
            1,
          );
        }
        if (parseLocator(seat.origin)) await seat.saveTrail(pushTrail(await seat.readTrail(), seat.origin));
        const runner = seat.local.engine.runner;
        await focus(runner, client, parseLocator(target.locator)!, target.pane);
        if (mode !== 'next') await runner.run(['set-option', '-p', '-u', '-t', target.pane, KEY.attention]).catch(() => '');
        return 0;
      } finally {
        for (const l of locals) l.close();
      }
    },
    () => agentServersHint(p, null),
  );
}

/** One server as jump sees it: where its client is, and that client's trail. */
interface Seat {
  local: Local;
  origin: string;
  /** The client (--client, else tmux's choice) is attached to this server. */
  attached: boolean;
  readTrail(): Promise<string[]>;
  saveTrail(t: string[]): Promise<unknown>;
}

interface Found {
  row: AgentRow;
  seat: Seat;
}

async function seatOf(local: Local, client: string | null): Promise<Seat> {
  const runner = local.engine.runner;
  const withClient = (args: string[]) => (client ? [...args.slice(0, 1), '-c', client, ...args.slice(1)] : args);
  const display = async (fmt: string) => (await runner.run(withClient(['display-message', '-p', fmt]))).replace(/\n$/, '');
  const origin = await display('#{session_name}:#{window_index}.#{pane_index}').catch(() => '');
  const shown = await display('#{client_name}').catch(() => '');
  const option = trailOption(client ?? shown);
  return {
    local,
    origin,
    attached: shown !== '',
    readTrail: async () =>
      (await runner.run(['show-options', '-sqv', option]).catch(() => ''))
        .split('\n')
        .map((l) => l.trim())
        .filter(Boolean),
    saveTrail: (t) => (t.length ? runner.run(['set-option', '-s', option, t.join('\n')]) : runner.run(['set-option', '-su', option]).catch(() => '')),
  };
}

/**
 * The pick over every server's rows. Locators repeat across servers (each may have `main:0.0`),
 * so each is read with its server's place in front of the session name: ties and "the next one
 * after where I am" then stay within a server, and servers follow one another in scan order.
 */
function pickAcross(found: Found[], seats: Seat[], home: Seat, mode: Exclude<Mode, 'back' | 'home' | 'pane' | 'menu'>): Found | null {
  const at = (seat: Seat, locator: string) => `${String(seats.indexOf(seat)).padStart(4, '0')}\u0001${locator}`;
  const rows = found.map((f) => ({ ...f.row, locator: at(f.seat, f.row.locator) }));
  const origin = parseLocator(home.origin) ? at(home, home.origin) : '';
  const row = mode === 'attention' ? pickAttention(rows, origin) : mode === 'blocked' ? pickBlocked(rows) : pickNext(rows, origin);
  return row ? found[rows.indexOf(row)]! : null;
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
