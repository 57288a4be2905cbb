// A view's rows from this machine's tmux server: the view drives detection cycles itself (as
// `subscribe` does, so no collector is needed), but only when something moved. What moves when an
// agent does (per pane: title, cursor, history, command, the state options another writer stamps)
// is a format tmux evaluates itself; the view subscribes to it over its control link
// (`refresh-client -B`, looping over every session, window and pane) and tmux says
// `%subscription-changed` only when the answer differs, so an idle view is woken by nothing.
// (Pane output notifications would cover only the attached session, and hooks would have to be
// installed in the person's server.) Without a control link the view asks the same question
// itself once a second. A full cycle (screens, processes, stamps) runs when the answer changed,
// at once after an act, and otherwise only as a slow belt for what moves no format (a screen
// repainted in place). A cycle whose rows equal the last one's is not passed on.

import { randomBytes } from 'node:crypto';
import type { ActionManifest } from '../../collector/core/action-manifest.js';
import type { CycleResult } from '../../collector/engine/cycle.js';
import { rowsWithRepos } from '../../collector/repo-rows.js';
import { ControlRunner } from '../../collector/tmux/control-runner.js';
import { TmuxError } from '../../collector/tmux/errors.js';
import { hostName } from '../../collector/tmux/host.js';
import { targetFlags } from '../../collector/tmux/target.js';
import { selectRow, type Selector } from '../../shared/selectors.js';
import type { Parsed } from '../args.js';
import { openLocal, type Local } from '../local.js';
import type { MenuItem } from './model.js';
import { loadActionList, localMenu } from './menu-items.js';
import { fromLocal, type WatchRow } from './rows.js';
import { binderFlags, errorLine, outcomeWord, runTma, type Source } from './source.js';

const PROBE_MS = 1000;
const BELT_MS = 60_000;
/**
 * Right after a person's act the row is what they watch: for this long it is looked at every
 * SETTLE_STEP_MS, not only when tmux's once-a-second subscription says something moved.
 */
const SETTLE_MS = 2500;
const SETTLE_STEP_MS = 200;
const SUB = 'tma-moves';
/** What a pane shows when its agent moves, without its screen. */
export const MOVES =
  '#{pane_id}|#{pane_title}|#{cursor_x}.#{cursor_y}|#{history_size}|#{pane_current_command}|#{@agent_state}|#{@agent_detail}|#{@agent_attention}';
/** The same for every pane of every session, as one value (a comma would start a loop's second form). */
export const MOVES_ALL = `#{S:#{W:#{P:${MOVES} }}}`;

export class LocalSource implements Source {
  readonly fleet = false;
  private closed = false;
  private wake: (() => void) | null = null;
  private timer: NodeJS.Timeout | null = null;
  private actions: ActionManifest[] | null = null;
  /** An act asked for a cycle now. */
  private poked = false;
  private settleUntil = 0;
  /** tmux said the moves changed since the last cycle began. */
  private moved = false;
  /** The control client that holds the subscription, while it is attached. */
  private subscribed = false;

  private constructor(
    private readonly local: Local,
    private readonly sel: Selector,
    private readonly serverFlags: string[],
    private readonly client: string | null,
    readonly label: string,
  ) {}

  static async open(p: Parsed, sel: Selector, client: string | null): Promise<LocalSource> {
    const local = await openLocal(p, { mode: 'control', quietManifests: true });
    const config = p.globals.config;
    const flags = [...targetFlags(local.target), ...(config ? ['--config', config] : [])];
    return new LocalSource(local, sel, flags, client, `this machine (${hostName()})`);
  }

  /** The moves probe's answer, or null when tmux did not answer (a cycle will say why). */
  private async probe(): Promise<string | null> {
    try {
      return await this.local.engine.runner.run(['list-panes', '-a', '-F', MOVES], { timeoutMs: 2000 });
    } catch {
      return null;
    }
  }

  /** Subscribe the control client to the moves; false when there is none to hold it. */
  private async subscribe(): Promise<boolean> {
    const runner = this.local.engine.runner;
    if (!(runner instanceof ControlRunner) || !runner.attached) return false;
    try {
      await runner.run(['refresh-client', '-B', `${SUB}::${MOVES_ALL}`], { timeoutMs: 2000 });
      return runner.attached;
    } catch {
      return false;
    }
  }

  private listen(): void {
    const runner = this.local.engine.runner;
    if (!(runner instanceof ControlRunner)) return;
    runner.on('notification', (n) => {
      if (n.name !== 'subscription-changed' || !n.args.startsWith(`${SUB} `)) return;
      this.moved = true;
      this.wake?.();
    });
    // A client that attached again is a new client: it holds no subscription until asked.
    runner.on('closed', () => (this.subscribed = false));
    runner.on('attached', () => (this.subscribed = false));
  }

  start(onRows: (rows: WatchRow[], trouble: Map<string, string>) => void): void {
    let last = '';
    this.listen();
    const loop = async () => {
      while (!this.closed) {
        const began = Date.now();
        this.moved = false;
        let res: CycleResult | null = null;
        try {
          await this.local.reload();
          res = await this.local.engine.cycle();
        } catch (e) {
          // A slow tmux costs one tick; a server that went away ends nothing: it may come back.
          if (!(e instanceof TmuxError)) throw e;
        }
        if (res && !this.closed) {
          const rows = (await rowsWithRepos(res)).filter((r) => selectRow(this.sel, r)).map(fromLocal);
          const line = JSON.stringify(rows);
          if (line !== last) {
            last = line;
            onRows(rows, new Map());
          }
        }
        // tmux's first answer to a new subscription is a change: it costs one cycle, once.
        if (!this.subscribed) this.subscribed = await this.subscribe();
        if (this.subscribed) {
          // A hold only the clock ends (the working→idle dwell after an idle repaint) ends with no
          // format moving, so tmux never says so: while one stands, look again each second. Else
          // tmux's word that something moved is the only wake-up, bar the belt.
          const limit = began < this.settleUntil ? SETTLE_STEP_MS : this.local.engine.waitsOnClock() ? PROBE_MS : BELT_MS;
          while (!this.closed && !this.poked && !this.moved && this.subscribed && Date.now() - began < limit) await this.sleep(limit - (Date.now() - began));
        } else {
          // The cycle's own stamps are part of what it leaves behind: the probe starts from there.
          const seen = await this.probe();
          while (!this.closed && !this.poked && Date.now() - began < BELT_MS) {
            await this.sleep(Date.now() < this.settleUntil ? SETTLE_STEP_MS : PROBE_MS);
            if (this.closed || this.poked) break;
            const now = await this.probe();
            if (now === null || now !== seen) break;
          }
        }
        this.poked = false;
      }
    };
    void loop();
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((done) => {
      this.timer = setTimeout(() => {
        this.wake = null;
        done();
      }, ms);
      this.wake = () => {
        if (this.timer) clearTimeout(this.timer);
        this.wake = null;
        done();
      };
    });
  }

  /** Look again now (after an act, so its effect shows without waiting for the tick). */
  poke(): void {
    this.poked = true;
    this.settleUntil = Date.now() + SETTLE_MS;
    this.wake?.();
  }

  async preview(row: WatchRow): Promise<string[] | null> {
    try {
      const out = await this.local.engine.runner.run(['capture-pane', '-p', '-t', row.pane], { timeoutMs: 1000 });
      const lines = out.replace(/\n$/, '').split('\n');
      while (lines.length && lines[lines.length - 1]!.trim() === '') lines.pop();
      return lines;
    } catch {
      return null;
    }
  }

  async act(action: string, row: WatchRow): Promise<string> {
    const slot = `watch-${randomBytes(9).toString('hex')}`;
    const res = await runTma([...this.serverFlags, 'act', action, '--pane', row.pane, ...binderFlags(row, slot)]);
    this.poke();
    return outcomeWord(res);
  }

  async jump(row: WatchRow): Promise<string | null> {
    const client = this.client ?? (await this.viewingClient());
    const res = await runTma([...this.serverFlags, 'jump', '--pane', row.pane, ...(client ? ['--client', client] : [])], 10_000);
    return errorLine(res);
  }

  /**
   * The client the person looks at this view through: the one showing this pane, else (a popup
   * has no pane) the one used last. Never a control-mode client (such as this view's own link),
   * which tmux would otherwise be free to pick.
   */
  private async viewingClient(): Promise<string | null> {
    let out: string;
    try {
      out = await this.local.engine.runner.run(['list-clients', '-F', '#{client_name}\t#{client_control_mode}\t#{client_activity}\t#{pane_id}'], {
        timeoutMs: 2000,
      });
    } catch {
      return null;
    }
    const clients = out
      .split('\n')
      .map((l) => l.split('\t'))
      .filter((f) => f.length === 4 && f[1] !== '1')
      .map(([name, , activity, pane]) => ({ name: name!, activity: Number(activity), pane: pane! }))
      .sort((a, b) => b.activity - a.activity);
    const here = process.env.TMUX_PANE;
    return (clients.find((c) => here && c.pane === here) ?? clients[0])?.name ?? null;
  }

  async menu(row: WatchRow): Promise<MenuItem[]> {
    this.actions ??= loadActionList(process.env);
    return (await localMenu(this.local.engine, this.local.config.apiBase, row.pane, this.actions)) ?? [];
  }

  close(): void {
    this.closed = true;
    this.wake?.();
    this.local.close();
  }
}
