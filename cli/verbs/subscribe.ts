// `tma subscribe --json`: a line-per-document stream of this server's agents, either whole
// snapshots or (`--events`) the class transitions between consecutive cycles. It drives cycles
// itself, so it works with no daemon; the stream ends cleanly when the reader goes away.

import type { CycleResult } from '../../collector/engine/cycle.js';
import { TmuxError } from '../../collector/tmux/errors.js';
import { diffEdges, type EdgeRow } from '../../shared/edges.js';
import { edgeLine, nowLine } from '../../shared/ls-table.js';
import { localRowObject, rowsDocument, toJsonLine, type AgentRow } from '../../shared/row.js';
import { selectRow, type Selector } from '../../shared/selectors.js';
import { UsageError, type Parsed } from '../args.js';
import type { SUBSCRIBE } from '../verb-flags.js';
import { guard, openLocal } from '../local.js';
import { selectorFrom } from '../selector-opts.js';
import { rowsWithRepos } from '../../collector/repo-rows.js';

export interface SubscribeOptions {
  events: boolean;
  changesOnly: boolean;
  /** Readable lines (no --json): each agent as it stands, then one line per state change. */
  text?: boolean;
}

/**
 * What one cycle's rows turn into on the stream. Pure apart from its memory of the previous
 * cycle, so the emission rules (silent baseline, change suppression) are testable without tmux.
 */
export class StreamState {
  private prevRows: EdgeRow[] | null = null;
  private prevLine: string | null = null;

  constructor(private readonly opts: SubscribeOptions) {}

  /** Lines to write for this cycle's selected rows; `at` is the subscriber's clock now. */
  next(rows: readonly AgentRow[], at: number): string[] {
    if (this.opts.text) {
      const prev = this.prevRows;
      this.prevRows = rows.slice();
      if (prev === null) return rows.length ? rows.map((r) => nowLine(r, at, false)) : ['no agent panes yet; waiting for changes'];
      return diffEdges(prev, rows, at).map((e) => edgeLine(e, false));
    }
    if (this.opts.events) {
      const prev = this.prevRows;
      this.prevRows = rows.slice();
      // The first cycle is the baseline: what already exists is not news.
      return prev === null ? [] : diffEdges(prev, rows, at).map(toJsonLine);
    }
    const line = toJsonLine(rowsDocument(rows.map(localRowObject)));
    const first = this.prevLine === null;
    const changed = line !== this.prevLine;
    this.prevLine = line;
    return first || changed || !this.opts.changesOnly ? [line] : [];
  }
}

/** `--interval SECS`: at least one second (fractions above that are fine). */
export function parseInterval(raw: string | undefined): number {
  if (raw === undefined) return 1000;
  if (!/^\d+(\.\d+)?$/.test(raw) || Number(raw) < 1) throw new UsageError(`--interval takes seconds, at least 1, not "${raw}"`);
  return Math.round(Number(raw) * 1000);
}

/** stdout that notices when its reader is gone, and lets a sleeper wake up for it. */
class LineOut {
  closed = false;
  private wake: (() => void) | null = null;

  constructor(private readonly out: NodeJS.WriteStream) {
    // EPIPE is the usual way a reader leaves; any other write error ends the stream the same way.
    out.on('error', () => this.close());
    out.on('close', () => this.close());
  }

  private close(): void {
    this.closed = true;
    this.wake?.();
  }

  /** Resolves once the line is handed to the OS (one line, one flush). */
  write(line: string): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise((done) => {
      this.out.write(`${line}\n`, (err) => {
        if (err) this.close();
        done();
      });
    });
  }

  sleep(ms: number): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise((done) => {
      const t = setTimeout(() => {
        this.wake = null;
        done();
      }, ms);
      this.wake = () => {
        clearTimeout(t);
        this.wake = null;
        done();
      };
    });
  }
}

async function selected(res: CycleResult, sel: Selector): Promise<AgentRow[]> {
  // Snapshot lines carry the repo trio, so it is resolved for every row, not only for selectors.
  return (await rowsWithRepos(res)).filter((r) => selectRow(sel, r));
}

export async function main(p: Parsed<typeof SUBSCRIBE>): Promise<number> {
  const sel = selectorFrom(p, { fleet: false });
  const intervalMs = parseInterval(p.opts.interval);
  const text = p.opts.json !== true;
  if (text && p.opts.events === true) throw new UsageError('--events is a JSON stream: add --json (without it, subscribe prints readable state changes)');
  const state = new StreamState({ events: p.opts.events === true, changesOnly: p.opts['changes-only'] === true, text });

  return guard(async () => {
    const local = await openLocal(p, { mode: 'control' });
    const out = new LineOut(process.stdout);
    try {
      while (!out.closed) {
        let res: CycleResult | null = null;
        try {
          await local.reload();
          res = await local.engine.cycle();
        } catch (e) {
          // A slow tmux costs one tick, silently; anything else ends the stream.
          if (!(e instanceof TmuxError) || e.kind !== 'timeout') throw e;
        }
        if (res) {
          const rows = await selected(res, sel);
          for (const line of state.next(rows, Date.now())) await out.write(line);
        }
        await out.sleep(intervalMs);
      }
      return 0;
    } finally {
      local.close();
    }
  });
}
