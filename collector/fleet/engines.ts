// One engine per tmux server, each over its own long-lived control-mode client, cycling on a
// timer and at once when woken. Servers that appear are picked up by the periodic rescan; a
// server that goes away is dropped and reported gone. Rows go to the publisher after each cycle.

import type { AgentRow, ProtocolRow } from '../../shared/row.js';
import { protocolRowObject } from '../../shared/row.js';
import type { CycleResult, Engine } from '../engine/cycle.js';
import { TmuxError } from '../tmux/errors.js';
import type { ServerTarget } from '../tmux/target.js';
import type { Discovered } from './discovery.js';
import type { LineLog } from '../../shared/log-level.js';

export interface RowSink {
  update(server: string, incarnation: string, rows: readonly ProtocolRow[]): void;
  gone(server: string): void;
  markReady(): void;
}

export interface EnginesOptions {
  /** `known`: the servers followed already, which need no probe. */
  discover: (known: ReadonlySet<string>) => Promise<Discovered[]>;
  open: (target: ServerTarget) => Promise<Engine>;
  sink: RowSink;
  intervalMs: number;
  /**
   * The timed cycle after a settled one (output watched, nothing waiting on a look): a slow sweep,
   * since output and hook events wake the engine anyway. Default: intervalMs.
   */
  idleMs?: number;
  /**
   * The same while the server's output watch hears every session (listenWake's `healthy`): the
   * watch wakes the engine on output and on listing news, so the timed cycle is only the safety
   * net. Default: idleMs.
   */
  sweepMs?: number;
  /** How often a watched engine renews its server heartbeat between cycles; 0 = only in cycles. */
  heartbeatMs?: number;
  /** How often servers are looked for; with heartbeats, rounded up to a whole number of them. */
  rescanMs?: number;
  /** Rows of a cycle as published (e.g. with repo labels filled in); default: the engine's rows. */
  enrich?: (res: CycleResult) => Promise<AgentRow[]>;
  /**
   * Start listening for wake-ups for a server; returns how to stop, or null when not possible.
   * The engine is handed over so hook events sent to this server are stamped through its client.
   */
  listenWake?: (socketPath: string, wake: () => void, engine: Engine) => Promise<WakeSource | null>;
  log?: LineLog;
  /** Runs after a cycle's rows went to the sink (the notifier rings here). */
  afterCycle?: (engine: Engine, res: CycleResult, rows: AgentRow[], server: string) => Promise<void>;
}

export interface WakeSource {
  close(): void;
  /** Nothing on this server can change unheard right now (see EnginesOptions.sweepMs). */
  healthy?(): boolean;
}

interface Tracked {
  key: string;
  engine: Engine;
  timer: ReturnType<typeof setTimeout> | null;
  settled: boolean;
  running: boolean;
  again: boolean;
  dropped: boolean;
  /** Set once the first cycle read the server's facts. */
  published: string | null;
  wake: WakeSource | null;
  lastError: string;
}

export class ServerEngines {
  private readonly tracked = new Map<string, Tracked>();
  private rescanTimer: ReturnType<typeof setInterval> | null = null;
  private scanning = false;
  private stopped = false;
  private readonly log: LineLog;

  constructor(private readonly opts: EnginesOptions) {
    this.log = opts.log ?? (() => undefined);
  }

  /** First scan and a first cycle of every server found, then ready; keeps following after. */
  async start(): Promise<void> {
    await this.rescan();
    await Promise.all([...this.tracked.values()].map((t) => this.cycle(t)));
    this.opts.sink.markReady();
    // Every wake-up of an idle collector costs about as much as the work it does, so the periodic
    // chores share one: the server heartbeats and the server rescan run on the same tick.
    const beatMs = this.opts.heartbeatMs ?? 0;
    const rescanMs = this.opts.rescanMs ?? 2000;
    const rescanEvery = beatMs > 0 ? Math.max(1, Math.ceil(rescanMs / beatMs)) : 1;
    let ticks = 0;
    this.rescanTimer = setInterval(
      () => {
        if (beatMs > 0) this.beat(beatMs);
        if (++ticks % rescanEvery === 0) this.rescanOnce();
      },
      beatMs > 0 ? beatMs : rescanMs,
    );
  }

  /** A rescan, unless the last one is still probing. */
  private rescanOnce(): void {
    if (this.scanning) return;
    this.scanning = true;
    void this.rescan()
      .catch((e: unknown) => this.log(`rescan failed: ${(e as Error).message}`, 'warn'))
      .finally(() => (this.scanning = false));
  }

  /**
   * Renew the heartbeat of every server that published, while its cycles keep up. A sweep 30 s
   * apart makes an old last cycle normal, so a server whose last cycle failed is not vouched for.
   */
  private beat(every: number): void {
    const maxAge = Math.max(this.opts.sweepMs ?? 0, this.opts.idleMs ?? 0, this.opts.intervalMs) + every;
    for (const t of this.tracked.values()) {
      if (t.published !== null && !t.dropped && t.lastError === '') void t.engine.heartbeat(maxAge).catch(() => undefined);
    }
  }

  stop(): void {
    this.stopped = true;
    if (this.rescanTimer) clearInterval(this.rescanTimer);
    for (const t of this.tracked.values()) this.release(t);
    this.tracked.clear();
  }

  /** Servers followed right now, by canonical socket path. */
  keys(): string[] {
    return [...this.tracked.keys()];
  }

  /**
   * The engine of a server as rows name it (the socket path it published), or by the key it is
   * followed under; null when this collector does not follow it (any more).
   */
  engineFor(server: string): Engine | null {
    for (const t of this.tracked.values()) if (!t.dropped && (t.published === server || t.key === server)) return t.engine;
    return null;
  }

  /** Cycle this server now (a hook changed something). */
  wake(key: string): void {
    const t = this.tracked.get(key);
    if (t) void this.cycle(t);
  }

  private async rescan(): Promise<void> {
    const found = await this.opts.discover(new Set(this.tracked.keys()));
    for (const d of found) {
      if (this.stopped || this.tracked.has(d.key)) continue;
      let engine: Engine;
      try {
        engine = await this.opts.open(d.target);
      } catch (e) {
        this.log(`cannot follow ${d.key}: ${(e as Error).message}`, 'warn');
        continue;
      }
      if (this.stopped || this.tracked.has(d.key)) {
        engine.runner.close();
        continue;
      }
      const t: Tracked = {
        key: d.key,
        engine,
        timer: null,
        settled: false,
        running: false,
        again: false,
        dropped: false,
        published: null,
        wake: null,
        lastError: '',
      };
      this.tracked.set(d.key, t);
      this.log(`following tmux server ${d.key}`);
      if (this.rescanTimer) void this.cycle(t);
    }
  }

  private async cycle(t: Tracked): Promise<void> {
    if (t.dropped) return;
    if (t.running) {
      t.again = true;
      return;
    }
    if (t.timer) clearTimeout(t.timer);
    t.timer = null;
    t.running = true;
    try {
      do {
        t.again = false;
        // Re-read pid and start time every cycle: a server restarted behind the same socket is a
        // new incarnation even if the control client re-attached without us noticing.
        t.engine.server.forget();
        const res = await t.engine.cycle();
        t.settled = res.settled;
        const info = await t.engine.server.get();
        const rows = this.opts.enrich ? await this.opts.enrich(res) : res.rows;
        if (t.dropped) return;
        this.opts.sink.update(
          info.socketPath,
          info.incarnation,
          rows.map((r) => protocolRowObject(r)),
        );
        if (this.opts.afterCycle) await this.opts.afterCycle(t.engine, res, rows, info.socketPath);
        if (t.published === null) {
          t.published = info.socketPath;
          if (this.opts.listenWake) t.wake = await this.opts.listenWake(info.socketPath, () => this.wake(t.key), t.engine);
        }
        t.lastError = '';
      } while (t.again && !t.dropped);
    } catch (e) {
      if (e instanceof TmuxError && e.kind === 'server-gone') {
        this.drop(t);
        return;
      }
      const msg = (e as Error).message;
      if (msg !== t.lastError) this.log(`cycle on ${t.key} failed: ${msg}`, 'warn');
      t.lastError = msg;
      // Not a settled server: retried at the interval, not a safety sweep away.
      t.settled = false;
    } finally {
      t.running = false;
    }
    if (!t.dropped && !this.stopped) t.timer = setTimeout(() => void this.cycle(t), this.nextCycleIn(t));
  }

  /** Often while a pane waits on a look, rarely once settled, and more rarely still while nothing goes unheard. */
  private nextCycleIn(t: Tracked): number {
    const { intervalMs, idleMs = 0, sweepMs } = this.opts;
    if (!t.settled) return intervalMs;
    const heard = sweepMs !== undefined && t.wake?.healthy?.() === true;
    return Math.max(heard ? sweepMs : idleMs, intervalMs);
  }

  private drop(t: Tracked): void {
    this.release(t);
    this.tracked.delete(t.key);
    this.log(`tmux server ${t.key} is gone`);
    if (t.published !== null) this.opts.sink.gone(t.published);
  }

  private release(t: Tracked): void {
    t.dropped = true;
    if (t.timer) clearTimeout(t.timer);
    t.timer = null;
    t.wake?.close();
    t.engine.runner.close();
  }
}
