// Installing, removing and checking the attention-clear hooks on one tmux server, with a record
// of where ours sit (per server, keyed by its socket path) so uninstall removes exactly those.

import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'smol-toml';
import { fnv1a64 } from '../../collector/core/fnv.js';
import {
  ALL_HOOKS,
  clearCommand,
  desiredHooks,
  hookReason,
  hookState,
  parseShowHooks,
  planHookInstall,
  planHookRemoval,
  renderHookRecord,
  RETIRED_HOOKS,
  type HookState,
} from '../../collector/install/tmux-hooks.js';
import type { TmuxRunner } from '../../collector/tmux/runner.js';
import { KEY } from '../../collector/core/store-codec.js';
import { LOCK_KEY } from '../../collector/core/stamp-render.js';

type Record_ = { hook: string; index: number }[];

async function entries(runner: TmuxRunner, hook: string) {
  return parseShowHooks(await runner.run(['show-hooks', '-g', hook]), hook);
}

export async function stateFile(runner: TmuxRunner, dir: string): Promise<string> {
  const socket = (await runner.run(['display-message', '-p', '#{socket_path}'])).trim();
  return join(dir, `hooks-state-${fnv1a64(socket).toString(16).padStart(16, '0')}.toml`);
}

function readRecord(file: string, dir: string): Record_ {
  for (const f of [file, join(dir, 'hooks-state.toml')]) {
    try {
      const doc = parse(readFileSync(f, 'utf8')) as { tmux_hooks?: { hook?: unknown; index?: unknown }[] };
      return (doc.tmux_hooks ?? []).flatMap((r) => (typeof r.hook === 'string' && typeof r.index === 'number' ? [{ hook: r.hook, index: r.index }] : []));
    } catch {
      // absent or unreadable: try the next, else no record
    }
  }
  return [];
}

export async function installTmuxHooks(runner: TmuxRunner, dir: string, bin: string, focus: boolean): Promise<void> {
  const record: Record_ = [];
  for (const hook of desiredHooks(focus)) {
    const wanted = clearCommand(hook, bin);
    const cmd = planHookInstall(hook, await entries(runner, hook), wanted);
    if (cmd) await runner.run(cmd);
    const ours = (await entries(runner, hook)).find((e) => e.command.includes('clear-attention'));
    if (ours) record.push({ hook, index: ours.index });
  }
  for (const hook of RETIRED_HOOKS) for (const cmd of planHookRemoval(hook, await entries(runner, hook), null)) await runner.run(cmd);
  const file = await stateFile(runner, dir);
  mkdirSync(dir, { recursive: true });
  writeFileSync(file, renderHookRecord(record));
}

export async function uninstallTmuxHooks(runner: TmuxRunner, dir: string): Promise<void> {
  const file = await stateFile(runner, dir);
  const record = readRecord(file, dir);
  for (const hook of ALL_HOOKS) {
    const mine = record.filter((r) => r.hook === hook).map((r) => r.index);
    const cmds = planHookRemoval(hook, await entries(runner, hook), record.length ? mine : null);
    for (const cmd of cmds) await runner.run(cmd);
  }
  rmSync(file, { force: true });
  rmSync(join(dir, 'hooks-state.toml'), { force: true });
}

export interface TmuxHookReport {
  hook: string;
  state: HookState;
  reason: string | null;
}

export async function tmuxHookStates(runner: TmuxRunner, dir: string, bin: string, focus: boolean): Promise<TmuxHookReport[]> {
  const record = readRecord(await stateFile(runner, dir), dir);
  const out: TmuxHookReport[] = [];
  for (const hook of desiredHooks(focus)) {
    const rec = record.find((r) => r.hook === hook);
    const state = hookState(await entries(runner, hook), clearCommand(hook, bin), rec ? rec.index : null);
    out.push({ hook, state, reason: hookReason(hook, state) });
  }
  return out;
}

/** Every option tma stamps on a pane; @agent_ignore is the user's own choice and stays. */
const PANE_KEYS = [
  ...Object.values(KEY).filter(
    (k) =>
      k !== KEY.ignore &&
      k !== KEY.windowSummary &&
      k !== KEY.sessionSummary &&
      !k.startsWith('@__') &&
      k !== KEY.setpfOk &&
      k !== KEY.lastPoll &&
      k !== KEY.collectorAt,
  ),
  LOCK_KEY,
  '@tma_watch_pid',
];

/** With no agent wired any more, tma's stamps go too; returns how many panes carried some. */
export async function clearPaneOptions(runner: TmuxRunner): Promise<number> {
  const listing = await runner.run(['list-panes', '-a', '-F', `#{pane_id}\t#{session_id}\t#{window_id}\t#{${KEY.state}}#{${KEY.name}}`]);
  let stamped = 0;
  for (const line of listing.split('\n').filter(Boolean)) {
    const [pane, session, window, mark] = line.split('\t');
    if (mark) stamped++;
    const cmds = PANE_KEYS.flatMap((k, i) => [...(i ? [';'] : []), 'set-option', '-pqu', '-t', pane!, k]);
    await runner.run([...cmds, ';', 'set-option', '-wqu', '-t', window!, KEY.windowSummary, ';', 'set-option', '-qu', '-t', session!, KEY.sessionSummary]);
  }
  return stamped;
}
