// The collector's notifier: after each cycle of a server it rings the panes whose episode has not
// rung yet, writing @agent_notified_at before firing (a failed write means no fire; the next cycle
// tries again), and spending muted fires without a sound. Fires also go to a hub as title-free
// events, and a notified blocked episode that ends is reported as `resolved`.

import type { FleetNotification } from '../../shared/notify.js';
import type { AgentRow } from '../../shared/row.js';
import type { NotifySettings } from '../config/config-types.js';
import type { CycleResult, Engine } from '../engine/cycle.js';
import { episodeAt, KEY } from '../core/store-codec.js';
import type { TmuxRunner } from '../tmux/runner.js';
import { panesInView } from '../tmux/clients.js';
import { TmuxError } from '../tmux/errors.js';
import type { HostSinks } from './host-sinks.js';
import { fleetEvent, resolvedEvent, type Fire } from './payload.js';
import { contextStep, dueTrigger, markerFor } from './trigger.js';
import type { LineLog } from '../../shared/log-level.js';

export interface HostNotifierOptions {
  settings: NotifySettings & { on: readonly string[] };
  sinks: Pick<HostSinks, 'fire'>;
  /** Where fleet events go (a hub outbox); absent: this host only. */
  fleet?: (event: FleetNotification) => void;
  /** `[remote] share_prompt`: the prompt summary may travel to a hub (default yes). */
  sharePrompt?: boolean;
  log?: LineLog;
}

const TIMEOUT = { timeoutMs: 3000 };

export class HostNotifier {
  /** Blocked episodes a hub was told about, by server and pane, until they end. */
  private readonly open = new Map<string, FleetNotification>();
  private readonly adopted = new Set<string>();
  private readonly log: LineLog;

  constructor(private readonly o: HostNotifierOptions) {
    this.log = o.log ?? (() => undefined);
  }

  /** Fleet events of the cycle being rung: they leave together at its end, so a burst arrives as one. */
  private held: FleetNotification[] | null = null;

  /** Ring what this cycle calls for. Never throws: a notifier problem must not stop the cycle. */
  async afterCycle(engine: Engine, res: CycleResult, rows: readonly AgentRow[], server: string): Promise<void> {
    const held: FleetNotification[] = (this.held = []);
    try {
      await this.run(engine, res, rows, server);
    } catch (e) {
      if (e instanceof TmuxError && e.kind === 'server-gone') return;
      this.log(`notify: ${(e as Error).message}`, 'warn');
    } finally {
      if (this.held === held) this.held = null;
      for (const ev of held) this.o.fleet?.(ev);
    }
  }

  private emit(ev: FleetNotification): void {
    if (this.held) this.held.push(ev);
    else this.o.fleet?.(ev);
  }

  private async run(engine: Engine, res: CycleResult, rows: readonly AgentRow[], server: string): Promise<void> {
    const runner = engine.runner;
    this.inView = null;
    const byPane = new Map(rows.map((r) => [r.pane, r]));
    this.adopt(server, res, byPane);
    for (const o of res.panes) {
      const row = byPane.get(o.rec.paneId);
      if (!o.stamp || !row) continue;
      const trigger = dueTrigger(o.stamp, this.o.settings.on, res.now);
      // A dwell: a later cycle rings it if the same episode still stands then.
      const young = trigger === 'blocked' && res.now - episodeAt(o.stamp) < (this.o.settings.dwellMs ?? 0);
      if (trigger && !young) {
        const marker = markerFor(o.stamp, res.now);
        if (await writeEpisodeMarker(runner, row.pane, marker)) {
          await this.fire({ trigger, row, episodeMs: episodeAt(o.stamp), at: Date.now() }, runner);
        }
      }
      const ctx = this.o.settings.contextHigh;
      if (ctx) {
        const step = contextStep(row.context, o.rec.options[KEY.contextNotifiedAt], ctx.threshold);
        if (step === 'rearm') await runner.run(['set-option', '-p', '-u', '-t', row.pane, KEY.contextNotifiedAt], TIMEOUT);
        if (step === 'fire') {
          const at = Date.now();
          if (await this.disarm(engine, row.pane, at)) await this.fire({ trigger: 'context_high', row, episodeMs: at, at }, runner);
        }
      }
    }
    this.resolveEnded(server, byPane);
  }

  /** Panes in view, read at most once per cycle (a burst of fires costs one tmux call). */
  private inView: Promise<Set<string>> | null = null;

  private async lookingAt(runner: TmuxRunner, pane: string): Promise<boolean | null> {
    this.inView ??= panesInView(runner, Date.now());
    try {
      return (await this.inView).has(pane);
    } catch (e) {
      if (e instanceof TmuxError && e.kind === 'server-gone') throw e;
      return null;
    }
  }

  private async fire(f: Fire, runner: TmuxRunner): Promise<void> {
    // Muted: the episode's one ring is spent, silently, so unmuting does not ring an old episode.
    if (f.row.muted) return;
    await this.o.sinks.fire(f, runner);
    if (!this.o.fleet) return;
    const ev = fleetEvent(f, this.o.sharePrompt ?? true);
    // Someone at this pane right now: a hub sink may then keep quiet (`when_looking`).
    if (f.trigger === 'blocked') ev.looking = await this.lookingAt(runner, f.row.pane);
    const key = paneKey(f.row.server, f.row.pane);
    const prior = f.trigger === 'blocked' ? this.open.get(key) : undefined;
    // A new blocked episode in the same run (its instant moved): the old one is over.
    if (prior && prior.episode_ms !== ev.episode_ms) this.emit(resolvedEvent(prior, f.at, f.row));
    this.emit(ev);
    if (f.trigger === 'blocked') this.open.set(key, ev);
  }

  /** Set the context marker only if absent (a racing writer keeps its value), then read it back. */
  private async disarm(engine: Engine, pane: string, at: number): Promise<boolean> {
    const guarded = await engine.setpfSupported(pane);
    const k = KEY.contextNotifiedAt;
    const set = guarded ? ['set-option', '-pF', '-t', pane, k, `#{?${k},#{${k}},${at}}`] : ['set-option', '-p', '-t', pane, k, String(at)];
    try {
      const out = await engine.runner.runChain([set, ['show-options', '-pqv', '-t', pane, k]], TIMEOUT);
      return (out[1] ?? '').trim() === String(at);
    } catch (e) {
      if (e instanceof TmuxError && e.kind === 'server-gone') throw e;
      return false;
    }
  }

  /**
   * After a restart, blocked panes this host already rang are still open episodes: take them back
   * (once per server) so their end is still reported. The hub ignores an end it never saw start.
   */
  private adopt(server: string, res: CycleResult, byPane: Map<string, AgentRow>): void {
    if (!this.o.fleet || this.adopted.has(server)) return;
    this.adopted.add(server);
    for (const o of res.panes) {
      const row = byPane.get(o.rec.paneId);
      if (!o.stamp || !row || row.state !== 'blocked' || row.muted) continue;
      const ep = episodeAt(o.stamp);
      if (o.stamp.notifiedAt === null || o.stamp.notifiedAt < ep) continue;
      const key = paneKey(server, row.pane);
      if (!this.open.has(key)) this.open.set(key, fleetEvent({ trigger: 'blocked', row, episodeMs: ep, at: o.stamp.notifiedAt }, false));
    }
  }

  /** Report the end of every notified blocked episode of this server that is over. */
  private resolveEnded(server: string, byPane: Map<string, AgentRow>): void {
    for (const [key, ev] of this.open) {
      if (ev.server !== server) continue;
      const row = byPane.get(ev.pane) ?? null;
      // Still blocked is still the episode the person was told about, even if its instant was
      // rewritten without a new ring (the marker already covers it); fire() retires it otherwise.
      if (row && row.state === 'blocked') continue;
      this.open.delete(key);
      this.emit(resolvedEvent(ev, Date.now(), row));
    }
  }
}

/**
 * The episode marker, written and read back in one chain: fire only if ours is what stands. The
 * collector and `tma event` both go through here, so whichever writes first owns the ring.
 */
export async function writeEpisodeMarker(runner: TmuxRunner, pane: string, value: number): Promise<boolean> {
  try {
    const out = await runner.runChain(
      [
        ['set-option', '-p', '-t', pane, KEY.notifiedAt, String(value)],
        ['show-options', '-pqv', '-t', pane, KEY.notifiedAt],
      ],
      TIMEOUT,
    );
    return (out[1] ?? '').trim() === String(value);
  } catch (e) {
    if (e instanceof TmuxError && e.kind === 'server-gone') throw e;
    return false;
  }
}

const paneKey = (server: string, pane: string) => `${server}\u0000${pane}`;
