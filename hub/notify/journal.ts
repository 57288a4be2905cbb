// The hub's record of notifications: which it accepted (so a resend is recognised) and how far
// each got with each sink (so a restart resumes what was not delivered, under the delivery id it
// had, and repeats nothing that was). An append-only JSONL file: every change is one small line,
// and a crash mid-line costs only that line (an unreadable line is skipped). Lines are written by
// one loop off the caller's path (group commit: whatever queued meanwhile goes in one write and
// at most one fsync), so a burst costs a few writes, not one fsync per line.
//
// What it holds is bounded: at most `keep` finished entries (oldest finished forgotten first) and
// at most `pendingMax` unfinished ones (past that the oldest is given up, as a sink that never
// recovers would be). The file is rewritten with just the live entries once the lines written
// since the last rewrite pass twice what that rewrite held, so rewriting costs at most about one
// line per line appended however long the hub runs.

import { close, closeSync, fsync, fsyncSync, mkdirSync, open, openSync, readFileSync, renameSync, unlinkSync, write, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { promisify } from 'node:util';
import type { FleetNotification } from '../../shared/notify.js';

const writeP = promisify(write) as (fd: number, s: string) => Promise<unknown>;
const fsyncP = promisify(fsync);
const openP = promisify(open);
const closeP = promisify(close);

/** One notification the hub accepted, with the host it came from and its hub-side id. */
export interface HubNotification extends FleetNotification {
  id: string;
  host: string;
  /** When the hub accepted it (hub clock). */
  received_ms: number;
}

/** `skipped`: held back on purpose (answered within the dwell, someone looking, the pane's cooldown). */
export type DeliveryState = 'pending' | 'sent' | 'failed' | 'skipped';

export interface SinkDelivery {
  state: DeliveryState;
  attempts: number;
  last_error: string | null;
  at: number | null;
  /** The delivery id of the message that carries it to this sink, once one was formed. */
  delivery?: string | null;
}

export interface JournalEntry {
  n: HubNotification;
  sinks: Map<string, SinkDelivery>;
}

type Line =
  | { op: 'accept'; n: HubNotification; sinks: string[] }
  | { op: 'sink'; id: string; sink: string; state: DeliveryState; attempts: number; error: string | null; at: number; delivery?: string }
  | { op: 'batch'; sink: string; delivery: string; ids: string[] }
  | { op: 'done'; sink: string; delivery: string; ids: string[]; state: DeliveryState; attempts: number; error: string | null; at: number }
  | { op: 'drop'; id: string; error: string };

/** Entries kept for dedup and listing; more than this and finished ones are forgotten, oldest first. */
export const JOURNAL_KEEP = 2000;
/** Unfinished entries held; past this the oldest is given up for every sink that still owes it. */
export const JOURNAL_PENDING_MAX = 2000;
/** Below this many lines the file is never rewritten. */
export const COMPACT_MIN_LINES = 4000;

export const DROP_REASON = 'given up: too many undelivered notifications';

export interface JournalStats {
  /** Lines appended (not counting rewrites). */
  lines: number;
  /** write() calls for appended lines. */
  appendWrites: number;
  fsyncs: number;
  /** Rewrites and the lines they wrote. */
  compactions: number;
  compactedLines: number;
}

interface Waiter {
  ok: () => void;
  fail: (e: Error) => void;
}

export class NotifyJournal {
  private readonly entries = new Map<string, JournalEntry>();
  /** Unfinished ids in accept order, finished ids in finish order: trimming is O(1) per entry. */
  private readonly pending = new Set<string>();
  private readonly finished = new Set<string>();
  private fd: number | null = null;
  /** Lines in the file now, and how many the last rewrite left in it. */
  private lines = 0;
  private liveLines = 0;
  private queue: string[] = [];
  private waiters: Waiter[] = [];
  private syncWanted = false;
  private busy = false;
  private closed = false;
  /** A rewrite that failed is not tried again before this many lines. */
  private compactAfter = 0;
  readonly stats: JournalStats = { lines: 0, appendWrites: 0, fsyncs: 0, compactions: 0, compactedLines: 0 };
  /** Told when an unfinished entry is given up to keep the bound (the sinks it still owed). */
  onDrop: (e: JournalEntry, sinks: string[]) => void = () => undefined;
  onError: (e: Error) => void = () => undefined;

  /** `path` null: in memory only (tests, and a hub told to keep no state). */
  constructor(
    private readonly path: string | null,
    private readonly keep = JOURNAL_KEEP,
    private readonly pendingMax = JOURNAL_PENDING_MAX,
  ) {
    if (path === null) return;
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    let text = '';
    try {
      text = readFileSync(path, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
    for (const raw of text.split('\n')) {
      if (!raw.trim()) continue;
      let line: Line;
      try {
        line = JSON.parse(raw) as Line;
      } catch {
        continue;
      }
      this.apply(line, true);
    }
    this.compactSync();
    this.fd = openSync(path, 'a', 0o600);
  }

  has(id: string): boolean {
    return this.entries.has(id);
  }

  get(id: string): JournalEntry | undefined {
    return this.entries.get(id);
  }

  get size(): { entries: number; unfinished: number; fileLines: number } {
    return { entries: this.entries.size, unfinished: this.pending.size, fileLines: this.lines };
  }

  /** Newest first. */
  recent(limit: number): JournalEntry[] {
    return [...this.entries.values()].slice(-limit).reverse();
  }

  /** Everything some sink still owes, oldest first. */
  unfinished(): JournalEntry[] {
    return [...this.pending].map((id) => this.entries.get(id)!);
  }

  /**
   * Record a new notification and the sinks it is owed to. It is known (`has`) at once; the
   * promise settles once it is on disk (fsynced), which is when it may be acknowledged. If it
   * cannot be written it is forgotten again, so the collector's resend is not taken for a repeat.
   */
  accept(n: HubNotification, sinks: string[]): Promise<JournalEntry> {
    const line: Line = { op: 'accept', n, sinks };
    const e = this.apply(line)!;
    return this.append(line, true).then(
      () => e,
      (err: unknown) => {
        if (this.entries.get(n.id) === e) this.forget(n.id);
        throw err;
      },
    );
  }

  /** A message was formed for `sink` carrying `ids` under `delivery`; settles once written. */
  batch(sink: string, delivery: string, ids: string[]): Promise<void> {
    const line: Line = { op: 'batch', sink, delivery, ids };
    this.apply(line);
    return this.append(line, false);
  }

  /** The message `delivery` reached its end with `sink`: one line for all it carried. */
  done(sink: string, delivery: string, ids: string[], state: DeliveryState, attempts: number, error: string | null, at: number): Promise<void> {
    const line: Line = { op: 'done', sink, delivery, ids, state, attempts, error, at };
    this.apply(line);
    return this.append(line, state === 'sent');
  }

  mark(id: string, sink: string, state: DeliveryState, attempts: number, error: string | null, at: number): Promise<void> {
    const line: Line = { op: 'sink', id, sink, state, attempts, error, at };
    this.apply(line);
    return this.append(line, state === 'sent');
  }

  /** Everything queued is written at once (synchronously) as a rewrite; the journal is then shut. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.path === null) return;
    const fd = this.fd;
    this.fd = null;
    try {
      this.compactSync();
      this.settle(this.waiters.splice(0), null);
    } catch (e) {
      this.settle(this.waiters.splice(0), e as Error);
    }
    this.queue = [];
    // The loop may still have a write in flight on the old descriptor: it closes it when done.
    if (fd !== null && !this.busy) closeSync(fd);
    else if (fd !== null) this.closeWhenIdle = fd;
  }

  private closeWhenIdle: number | null = null;

  private apply(line: Line, replay = false): JournalEntry | undefined {
    switch (line.op) {
      case 'accept': {
        const e: JournalEntry = {
          n: line.n,
          sinks: new Map(line.sinks.map((s) => [s, { state: 'pending' as const, attempts: 0, last_error: null, at: null, delivery: null }])),
        };
        this.forget(line.n.id);
        this.entries.set(line.n.id, e);
        this.settled(line.n.id, e);
        this.trim(replay);
        return e;
      }
      case 'sink':
        this.set(line.id, line.sink, {
          state: line.state,
          attempts: line.attempts,
          last_error: line.error,
          at: line.at,
          ...(line.delivery ? { delivery: line.delivery } : {}),
        });
        return this.entries.get(line.id);
      case 'batch':
        for (const id of line.ids) this.set(id, line.sink, { delivery: line.delivery });
        return undefined;
      case 'done':
        for (const id of line.ids) this.set(id, line.sink, { state: line.state, attempts: line.attempts, last_error: line.error, at: line.at });
        return undefined;
      case 'drop':
        this.forget(line.id);
        return undefined;
    }
  }

  private set(id: string, sink: string, patch: Partial<SinkDelivery>): void {
    const e = this.entries.get(id);
    const d = e?.sinks.get(sink);
    if (!e || !d) return;
    Object.assign(d, patch);
    this.settled(id, e);
  }

  /** Keep the pending/finished sets in step with an entry's state. */
  private settled(id: string, e: JournalEntry): void {
    const open = [...e.sinks.values()].some((d) => d.state === 'pending');
    if (open && !this.pending.has(id)) {
      this.finished.delete(id);
      this.pending.add(id);
    } else if (!open && !this.finished.has(id)) {
      this.pending.delete(id);
      this.finished.add(id);
    }
  }

  private forget(id: string): void {
    this.entries.delete(id);
    this.pending.delete(id);
    this.finished.delete(id);
  }

  private trim(replay: boolean): void {
    while (this.entries.size > this.keep && this.finished.size) this.forget(this.finished.values().next().value as string);
    while (this.pending.size > this.pendingMax) {
      const id = this.pending.values().next().value as string;
      const e = this.entries.get(id)!;
      const owed = [...e.sinks].filter(([, d]) => d.state === 'pending').map(([s]) => s);
      this.forget(id);
      if (replay) continue;
      void this.append({ op: 'drop', id, error: DROP_REASON }, false).catch(() => undefined);
      this.onDrop(e, owed);
    }
  }

  private append(line: Line, sync: boolean): Promise<void> {
    if (this.path === null) return Promise.resolve();
    if (this.closed) return Promise.reject(new Error('the notification journal is closed'));
    return new Promise<void>((ok, fail) => {
      this.queue.push(`${JSON.stringify(line)}\n`);
      this.waiters.push({ ok, fail });
      if (sync) this.syncWanted = true;
      if (!this.busy) void this.run();
    });
  }

  private compactDue(): boolean {
    return this.lines > Math.max(COMPACT_MIN_LINES, this.liveLines * 3, this.compactAfter);
  }

  /** The one writer: appends what queued, or rewrites the file when it has grown enough. */
  private async run(): Promise<void> {
    this.busy = true;
    try {
      while (!this.closed && this.queue.length) {
        const lines = this.queue.splice(0);
        const waiters = this.waiters.splice(0);
        const sync = this.syncWanted;
        this.syncWanted = false;
        this.lines += lines.length;
        this.stats.lines += lines.length;
        if (this.compactDue() && (await this.compactAsync())) {
          this.settle(waiters, null);
          continue;
        }
        // Held for the iteration: close() may hand the descriptor to closeWhenIdle meanwhile.
        const fd = this.fd!;
        try {
          this.stats.appendWrites++;
          await writeP(fd, lines.join(''));
          if (sync) {
            this.stats.fsyncs++;
            await fsyncP(fd);
          }
          this.settle(waiters, null);
        } catch (e) {
          this.onError(e as Error);
          this.settle(waiters, e as Error);
        }
      }
    } finally {
      this.busy = false;
      if (this.closeWhenIdle !== null) {
        closeSync(this.closeWhenIdle);
        this.closeWhenIdle = null;
      }
    }
  }

  private settle(waiters: Waiter[], err: Error | null): void {
    for (const w of waiters) {
      if (err) w.fail(err);
      else w.ok();
    }
  }

  /** The live entries as lines: one accept each, and a sink line for each delivery that moved. */
  private liveText(): { text: string; n: number } {
    const out: string[] = [];
    for (const e of this.entries.values()) {
      out.push(JSON.stringify({ op: 'accept', n: e.n, sinks: [...e.sinks.keys()] }));
      for (const [sink, d] of e.sinks) {
        if (d.state === 'pending' && d.attempts === 0 && !d.delivery) continue;
        out.push(
          JSON.stringify({
            op: 'sink',
            id: e.n.id,
            sink,
            state: d.state,
            attempts: d.attempts,
            error: d.last_error,
            at: d.at ?? 0,
            ...(d.delivery ? { delivery: d.delivery } : {}),
          }),
        );
      }
    }
    return { text: out.length ? `${out.join('\n')}\n` : '', n: out.length };
  }

  /**
   * Rewrite in the loop: the in-memory state already holds every queued line's effect, so the
   * rewrite replaces them. Returns false (and backs off) when it could not be written, so the
   * caller appends the lines instead.
   */
  private async compactAsync(): Promise<boolean> {
    const tmp = `${this.path}.tmp`;
    const { text, n } = this.liveText();
    let fd: number | null = null;
    try {
      fd = await openP(tmp, 'w', 0o600);
      await writeP(fd, text);
      await fsyncP(fd);
      await closeP(fd);
      fd = null;
      if (this.closed) {
        unlinkSync(tmp);
        return true;
      }
      // Synchronous from here: the descriptor swap must not interleave with close().
      renameSync(tmp, this.path!);
      const old = this.fd!;
      this.fd = openSync(this.path!, 'a', 0o600);
      closeSync(old);
      this.lines = this.liveLines = n;
      this.stats.compactions++;
      this.stats.compactedLines += n;
      return true;
    } catch (e) {
      if (fd !== null) closeSync(fd);
      this.onError(e as Error);
      this.compactAfter = this.lines + COMPACT_MIN_LINES;
      return false;
    }
  }

  private compactSync(): void {
    const tmp = `${this.path}.tmp`;
    const { text, n } = this.liveText();
    const fd = openSync(tmp, 'w', 0o600);
    try {
      writeSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, this.path!);
    this.lines = this.liveLines = n;
  }
}
