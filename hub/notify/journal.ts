// The hub's record of notifications: which it accepted (so a resend is recognised) and how far
// each got with each sink (so a restart resumes what was not delivered, and repeats nothing that
// was). An append-only JSONL file: every change is one small line written before it is acted on
// or acknowledged, which survives a kill -9 with no store to embed, and a crash mid-line costs only
// that line (an unreadable line is skipped). When the file grows past a few times what it needs to
// hold, it is rewritten (to a temporary file, then renamed over) with just the live entries.

import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import type { FleetNotification } from '../../shared/notify.js';

/** One notification the hub accepted, with the host it came from and its hub-side id. */
export interface HubNotification extends FleetNotification {
  id: string;
  host: string;
  /** When the hub accepted it (hub clock). */
  received_ms: number;
}

export type DeliveryState = 'pending' | 'sent' | 'failed';

export interface SinkDelivery {
  state: DeliveryState;
  attempts: number;
  last_error: string | null;
  at: number | null;
}

export interface JournalEntry {
  n: HubNotification;
  sinks: Map<string, SinkDelivery>;
}

type Line =
  | { op: 'accept'; n: HubNotification; sinks: string[] }
  | { op: 'sink'; id: string; sink: string; state: DeliveryState; attempts: number; error: string | null; at: number };

/** Entries kept for dedup and listing; more than this and finished ones are forgotten, oldest first. */
export const JOURNAL_KEEP = 2000;

export class NotifyJournal {
  private readonly entries = new Map<string, JournalEntry>();
  private fd: number | null = null;
  private lines = 0;

  /** `path` null: in memory only (tests, and a hub told to keep no state). */
  constructor(private readonly path: string | null, private readonly keep = JOURNAL_KEEP) {
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
      this.apply(line);
    }
    this.fd = openSync(path, 'a', 0o600);
    this.compact();
  }

  has(id: string): boolean {
    return this.entries.has(id);
  }

  get(id: string): JournalEntry | undefined {
    return this.entries.get(id);
  }

  /** Newest first. */
  recent(limit: number): JournalEntry[] {
    return [...this.entries.values()].slice(-limit).reverse();
  }

  /** Everything some sink still owes. */
  unfinished(): JournalEntry[] {
    return [...this.entries.values()].filter((e) => [...e.sinks.values()].some((d) => d.state === 'pending'));
  }

  /** Record a new notification and the sinks it is owed to, durably, before it is acknowledged. */
  accept(n: HubNotification, sinks: string[]): JournalEntry {
    this.write({ op: 'accept', n, sinks }, true);
    return this.apply({ op: 'accept', n, sinks })!;
  }

  mark(id: string, sink: string, state: DeliveryState, attempts: number, error: string | null, at: number): void {
    const line: Line = { op: 'sink', id, sink, state, attempts, error, at };
    this.write(line, state === 'sent');
    this.apply(line);
  }

  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }

  private apply(line: Line): JournalEntry | undefined {
    if (line.op === 'accept') {
      const e: JournalEntry = {
        n: line.n,
        sinks: new Map(line.sinks.map((s) => [s, { state: 'pending' as const, attempts: 0, last_error: null, at: null }])),
      };
      this.entries.set(line.n.id, e);
      this.trim();
      return e;
    }
    const e = this.entries.get(line.id);
    const d = e?.sinks.get(line.sink);
    if (d) Object.assign(d, { state: line.state, attempts: line.attempts, last_error: line.error, at: line.at });
    return e;
  }

  /** Forget the oldest finished entries beyond `keep`; unfinished ones stay until they finish. */
  private trim(): void {
    if (this.entries.size <= this.keep) return;
    for (const [id, e] of this.entries) {
      if (this.entries.size <= this.keep) break;
      if ([...e.sinks.values()].every((d) => d.state !== 'pending')) this.entries.delete(id);
    }
  }

  private write(line: Line, sync: boolean): void {
    if (this.fd === null) return;
    writeSync(this.fd, `${JSON.stringify(line)}\n`);
    // Surviving a killed hub needs only the write; fsync also survives the machine going down.
    if (sync) fsyncSync(this.fd);
    if (++this.lines > this.keep * 4) this.compact();
  }

  private compact(): void {
    if (this.path === null || this.fd === null) return;
    const tmp = `${this.path}.tmp`;
    const fd = openSync(tmp, 'w', 0o600);
    let n = 0;
    try {
      for (const e of this.entries.values()) {
        writeSync(fd, `${JSON.stringify({ op: 'accept', n: e.n, sinks: [...e.sinks.keys()] })}\n`);
        n++;
        for (const [sink, d] of e.sinks) {
          if (d.state === 'pending' && d.attempts === 0) continue;
          writeSync(fd, `${JSON.stringify({ op: 'sink', id: e.n.id, sink, state: d.state, attempts: d.attempts, error: d.last_error, at: d.at ?? 0 })}\n`);
          n++;
        }
      }
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, this.path);
    closeSync(this.fd);
    this.fd = openSync(this.path, 'a', 0o600);
    this.lines = n;
  }
}
