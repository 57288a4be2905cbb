// Screens seen as they change. tmux tells a control client about every pane that paints
// (`%output %N …`), but only for windows of the session that client is attached to, so we keep
// one output client per session. A pane that painted is looked at shortly after it goes quiet;
// one that starts painting and does not stop (a spinner after a prompt was answered) gets its
// first look `firstBusyMs` into the burst and then one every `maxBusyMs`; and no pane is looked
// at more often than every `minGapMs`. The painted bytes themselves are discarded: the capture
// reads the screen as it stands. The engine's slow poll stays the safety net for anything missed.

import type { ControlNotification } from './control-parser.js';
import { ControlRunner } from './control-runner.js';
import type { Env, TmuxRunner } from './runner-types.js';
import type { ServerTarget } from './target.js';

export interface QuietEdgeOptions {
  /** A pane is quiet this long after its last output. */
  quietMs: number;
  /** A pane painting without pause is still looked at this often. */
  maxBusyMs: number;
  /**
   * The first look into a burst that does not go quiet comes this soon (default `maxBusyMs`);
   * later looks at a pane that kept painting through its last one come every `maxBusyMs`.
   */
  firstBusyMs?: number;
  /** Never two edges for one pane closer than this. */
  minGapMs: number;
  now?: () => number;
}

/**
 * 150 ms without output: an agent's change (a few frames, tens of milliseconds apart) has settled,
 * and a spinner ticking faster than that counts as one long burst (a look a second), not a quiet
 * look after every tick. A burst that never settles is first looked at after 300 ms.
 */
export const DEFAULT_QUIET: QuietEdgeOptions = { quietMs: 150, maxBusyMs: 1000, firstBusyMs: 300, minGapMs: 250 };

interface Active {
  first: number;
  last: number;
  /** This burst carries on one that was still painting at its last look. */
  continued: boolean;
}

/**
 * Pure timing: which panes are due a look. The caller feeds output and asks `due(now)`, then sleeps
 * until `nextAt()`.
 */
export class QuietEdges {
  private readonly active = new Map<string, Active>();
  private readonly lastEdge = new Map<string, number>();
  /** Panes whose last look came while they were still painting, and when. */
  private readonly busyEdge = new Map<string, number>();

  constructor(private readonly o: QuietEdgeOptions) {}

  output(pane: string, now: number): void {
    this.unstep(pane, now);
    const a = this.active.get(pane);
    if (a) {
      a.last = now;
      return;
    }
    const busy = this.busyEdge.get(pane);
    this.busyEdge.delete(pane);
    this.active.set(pane, { first: now, last: now, continued: busy !== undefined && now - busy < this.o.quietMs });
  }

  /**
   * Times ahead of `now` were taken on a clock that has stepped back since: forgotten, or the
   * pane's next look would wait until the clock caught up with them (an hour for an hour's step).
   */
  private unstep(pane: string, now: number): void {
    if ((this.lastEdge.get(pane) ?? now) > now) this.lastEdge.delete(pane);
    if ((this.busyEdge.get(pane) ?? now) > now) this.busyEdge.delete(pane);
    const a = this.active.get(pane);
    if (a && a.first > now) this.active.set(pane, { first: now, last: now, continued: false });
  }

  private busyLimit(a: Active): number {
    return a.continued ? this.o.maxBusyMs : Math.min(this.o.firstBusyMs ?? this.o.maxBusyMs, this.o.maxBusyMs);
  }

  private dueAt(pane: string, a: Active): number {
    const ready = Math.min(a.last + this.o.quietMs, a.first + this.busyLimit(a));
    return Math.max(ready, (this.lastEdge.get(pane) ?? Number.NEGATIVE_INFINITY) + this.o.minGapMs);
  }

  /** Panes due a look now; each leaves the active set (its next output re-arms it). */
  due(now: number): string[] {
    const out: string[] = [];
    for (const pane of [...this.active.keys()]) {
      this.unstep(pane, now);
      const a = this.active.get(pane)!;
      if (this.dueAt(pane, a) > now) continue;
      out.push(pane);
      this.active.delete(pane);
      this.lastEdge.set(pane, now);
      // Looked at before it went quiet: if it paints on, it is one long burst, not a new one.
      if (now < a.last + this.o.quietMs) this.busyEdge.set(pane, now);
    }
    // The gap memory only matters for panes that edged recently.
    if (this.lastEdge.size > 4096) for (const [p, t] of this.lastEdge) if (now - t > this.o.minGapMs) this.lastEdge.delete(p);
    if (this.busyEdge.size > 4096) for (const [p, t] of this.busyEdge) if (now - t > this.o.quietMs) this.busyEdge.delete(p);
    return out;
  }

  /** When the next pane falls due, or null when nothing is active. */
  nextAt(): number | null {
    let at: number | null = null;
    for (const [pane, a] of this.active) {
      const d = this.dueAt(pane, a);
      if (at === null || d < at) at = d;
    }
    return at;
  }
}

/** The pane id of a `%output %N data` notification, or null for any other. */
export function outputPane(n: ControlNotification): string | null {
  if (n.name !== 'output') return null;
  const sp = n.args.indexOf(' ');
  const pane = sp < 0 ? n.args : n.args.slice(0, sp);
  return /^%\d+$/.test(pane) ? pane : null;
}

export interface OutputWatchOptions {
  target: ServerTarget;
  bin: string;
  env?: Env;
  /** Lists the server's sessions (the engine's own client). */
  runner: TmuxRunner;
  /** Panes whose screens may have changed. */
  onDue: (panes: string[]) => void;
  timing?: QuietEdgeOptions;
  /**
   * Something other than a screen moved: a window or pane came or went, a layout or pane mode
   * changed, a session came, went or was renamed, or an output client ended (the server may be
   * gone). Called once per burst of such news, shortly after it.
   */
  onChange?: () => void;
  /**
   * How often the session list is re-read anyway while every client is attached
   * (`%sessions-changed` and a client ending trigger a read at once); default 30 s.
   */
  rescanMs?: number;
  /** The same while some client is not attached (it is retried); default 2 s. */
  retryMs?: number;
  log?: (line: string) => void;
}

/**
 * Notifications that say the pane listing moved without any pane painting: what tmux tells a
 * control client when windows, panes, layouts, pane modes or sessions change. A client hears its
 * own session's windows as `window-*` and every other session's as `unlinked-window-*`.
 */
export const LISTING_NEWS: ReadonlySet<string> = new Set([
  'window-add',
  'window-close',
  'window-pane-changed',
  'window-renamed',
  'layout-change',
  'unlinked-window-add',
  'unlinked-window-close',
  'unlinked-window-renamed',
  'pane-mode-changed',
  'sessions-changed',
  'session-renamed',
  'session-window-changed',
]);

/** One output client per session of a server, feeding quiet edges to `onDue`. */
export class OutputWatch {
  private readonly clients = new Map<string, ControlRunner>();
  private readonly edges: QuietEdges;
  private readonly now: () => number;
  private timer: NodeJS.Timeout | null = null;
  private timerAt = 0;
  private rescanTimer: NodeJS.Timeout | null = null;
  private soon: NodeJS.Timeout | null = null;
  private news: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(private readonly o: OutputWatchOptions) {
    const timing = o.timing ?? DEFAULT_QUIET;
    this.edges = new QuietEdges(timing);
    this.now = timing.now ?? Date.now;
  }

  async start(): Promise<void> {
    await this.rescan();
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.rescanTimer) clearTimeout(this.rescanTimer);
    if (this.soon) clearTimeout(this.soon);
    if (this.news) clearTimeout(this.news);
    for (const c of this.clients.values()) c.close();
    this.clients.clear();
  }

  /** Sessions currently watched (doctor and tests). */
  sessions(): string[] {
    return [...this.clients.keys()];
  }

  /**
   * Every session has an attached output client: nothing can change unheard, so the engine's
   * sweep is only the safety net and may come rarely.
   */
  healthy(): boolean {
    if (this.closed || this.clients.size === 0) return false;
    for (const c of this.clients.values()) if (!c.attached) return false;
    return true;
  }

  /** One call of `onChange` per burst: every client hears a session come or go. */
  private changed(): void {
    if (this.news || this.closed || !this.o.onChange) return;
    this.news = setTimeout(() => {
      this.news = null;
      if (!this.closed) this.o.onChange?.();
    }, 50);
  }

  /** The next safety read of the session list: soon while a client is down, rarely otherwise. */
  private armRescan(): void {
    if (this.closed) return;
    if (this.rescanTimer) clearTimeout(this.rescanTimer);
    const every = this.healthy() ? (this.o.rescanMs ?? 30_000) : (this.o.retryMs ?? 2000);
    this.rescanTimer = setTimeout(() => void this.rescan(), every);
    this.rescanTimer.unref();
  }

  /** Every client hears the same `%sessions-changed`: one read answers them all. */
  private rescanSoon(): void {
    if (this.soon || this.closed) return;
    this.soon = setTimeout(() => {
      this.soon = null;
      void this.rescan();
    }, 50);
  }

  private async rescan(): Promise<void> {
    if (this.closed) return;
    let ids: string[];
    try {
      ids = (await this.o.runner.run(['list-sessions', '-F', '#{session_id}'])).split('\n').filter((s) => /^\$\d+$/.test(s));
    } catch {
      // The engine's cycle reports a gone server; meanwhile nothing is watched, and we retry soon.
      this.armRescan();
      return;
    }
    if (this.closed) return;
    const want = new Set(ids);
    const attaching: Promise<boolean>[] = [];
    for (const [id, c] of this.clients) {
      if (want.has(id)) continue;
      c.close();
      this.clients.delete(id);
    }
    for (const id of want) {
      let c = this.clients.get(id);
      if (!c) {
        c = new ControlRunner({ target: this.o.target, bin: this.o.bin, env: this.o.env, output: true, session: id });
        c.on('notification', (n) => {
          const pane = outputPane(n);
          if (pane) return this.output(pane);
          if (!LISTING_NEWS.has(n.name)) return;
          // Every control client hears a session come or go: follow it now, not at the next sweep.
          if (n.name === 'sessions-changed') this.rescanSoon();
          this.changed();
        });
        // A client that ended leaves its session unheard (or the server is gone): the engine
        // looks now and sweeps often until the client is back.
        c.on('closed', () => {
          this.changed();
          this.rescanSoon();
        });
        this.clients.set(id, c);
      }
      // A request (re)attaches a client that is not attached; it answers cheaply when it is.
      if (!c.attached)
        attaching.push(
          c.connect().then(
            (ok) => ok && this.heardFrom(id),
            () => false,
          ),
        );
    }
    await Promise.all(attaching);
    this.armRescan();
  }

  /**
   * A client hears only what its session paints after it attached: whatever the session's panes
   * painted before (since the engine's first look, in a session just opened, or while a client was
   * down) is looked at now.
   */
  private async heardFrom(session: string): Promise<boolean> {
    try {
      const panes = (await this.o.runner.run(['list-panes', '-s', '-t', session, '-F', '#{pane_id}'])).split('\n').filter((p) => /^%\d+$/.test(p));
      if (panes.length && !this.closed) this.o.onDue(panes);
    } catch {
      // The session closed meanwhile: the next listing says so.
    }
    return true;
  }

  private output(pane: string): void {
    this.edges.output(pane, this.now());
    this.arm();
  }

  private arm(): void {
    if (this.closed) return;
    const at = this.edges.nextAt();
    if (at === null) return;
    if (this.timer && this.timerAt <= at) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(
      () => {
        this.timer = null;
        const due = this.edges.due(this.now());
        if (due.length) this.o.onDue(due);
        this.arm();
      },
      Math.max(0, at - this.now()),
    );
    this.timer.unref();
  }
}
