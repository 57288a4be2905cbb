// A view's rows from this machine's tmux server: the view drives detection cycles itself (as
// `subscribe` does, so no collector is needed), but only when something moved. Once a second it
// asks tmux one cheap question over its control link: per pane, what moves when its agent does
// (title, cursor, history, command, the state options another writer stamps), evaluated by tmux
// with no screen read. A full cycle (screens, processes, stamps) runs when that answer changed,
// at once after an act, and otherwise only as a slow belt. (tmux's own `refresh-client -B`
// subscriptions would spare even the question, but they cover only the attached session.)
// A cycle whose rows equal the last one's is not passed on, so nothing is redrawn for it.

import { randomBytes } from 'node:crypto';
import type { ActionManifest } from '../../collector/core/action-manifest.js';
import type { CycleResult } from '../../collector/engine/cycle.js';
import { rowsWithRepos } from '../../collector/repo-rows.js';
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
const BELT_MS = 10_000;
/** What a pane shows when its agent moves, without its screen. */
export const MOVES =
  '#{pane_id}|#{pane_title}|#{cursor_x},#{cursor_y}|#{history_size}|#{pane_current_command}|#{@agent_state}|#{@agent_detail}|#{@agent_attention}';

export class LocalSource implements Source {
  readonly fleet = false;
  private closed = false;
  private wake: (() => void) | null = null;
  private timer: NodeJS.Timeout | null = null;
  private actions: ActionManifest[] | null = null;
  /** An act asked for a cycle now. */
  private poked = false;

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

  start(onRows: (rows: WatchRow[], trouble: Map<string, string>) => void): void {
    let last = '';
    const loop = async () => {
      while (!this.closed) {
        const began = Date.now();
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
        // The cycle's own stamps are part of what it leaves behind: the probe starts from there.
        const seen = await this.probe();
        while (!this.closed && !this.poked && Date.now() - began < BELT_MS) {
          await this.sleep(PROBE_MS);
          if (this.closed || this.poked) break;
          const now = await this.probe();
          if (now === null || now !== seen) break;
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
