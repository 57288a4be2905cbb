// The Codex rollout tail: Codex writes no statusline, but logs every token count to a per-session
// JSONL file under $CODEX_HOME/sessions/YYYY/MM/DD/. Each cycle reads the end of the file of
// every registered Codex pane and stamps the context gauge (and the model) from it.
// The one file reader of the cycle; the parsing is the pure core's.

import { closeSync, existsSync, openSync, readdirSync, readSync, statSync, type BigIntStats } from 'node:fs';
import { join } from 'node:path';
import { isRolloutFor, readRollout, wholeLines, type RolloutReading } from '../core/telemetry/rollout.js';
import { renderContextChain, type TmuxCommand } from '../core/stamp-render.js';
import { KEY } from '../core/store-codec.js';
import type { AgentManifest } from '../core/types.js';

export const TAIL_WINDOW = 64 * 1024;
export const TAIL_CAP = 1024 * 1024;

/** `$CODEX_HOME`, else `~/.codex`; null when neither can be named. */
export function codexRoot(env: NodeJS.ProcessEnv): string | null {
  if (env.CODEX_HOME) return env.CODEX_HOME;
  if (env.HOME) return join(env.HOME, '.codex');
  return null;
}

/** Whether an agent's gauge comes from a rollout file. */
export function tailsRollout(m: AgentManifest | undefined): boolean {
  const c = m?.telemetry.context;
  return c?.channel === 'file-tail' && c.format === 'codex-rollout-jsonl';
}

function sortedDesc(dir: string): string[] {
  try {
    return readdirSync(dir).sort((a, b) => (a < b ? 1 : a > b ? -1 : 0));
  } catch {
    return [];
  }
}

/** Newest (by mtime) rollout file of the session under `<root>/sessions/Y/M/D/`. */
export function findRollout(root: string, session: string): string | null {
  const base = join(root, 'sessions');
  let best: { path: string; mtime: bigint } | null = null;
  for (const y of sortedDesc(base))
    for (const m of sortedDesc(join(base, y)))
      for (const d of sortedDesc(join(base, y, m))) {
        const dir = join(base, y, m, d);
        for (const f of sortedDesc(dir)) {
          if (!isRolloutFor(f, session)) continue;
          const path = join(dir, f);
          let st: BigIntStats;
          try {
            st = statSync(path, { bigint: true });
          } catch {
            continue;
          }
          if (!st.isFile()) continue;
          if (best === null || st.mtimeNs >= best.mtime) best = { path, mtime: st.mtimeNs };
        }
      }
  return best?.path ?? null;
}

function readRange(path: string, start: number, end: number): string {
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.alloc(end - start);
    let got = 0;
    while (got < buf.length) {
      const n = readSync(fd, buf, got, buf.length - got, start + got);
      if (n === 0) break;
      got += n;
    }
    return buf.subarray(0, got).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/** Read back from the end, widening until a token count shows up, the file starts, or the cap. */
export function tailFile(path: string, size: number): RolloutReading {
  let window = TAIL_WINDOW;
  let last: RolloutReading = { pct: null, model: null };
  for (;;) {
    const start = Math.max(0, size - window);
    last = readRollout(wholeLines(readRange(path, start, size), start === 0));
    if (last.pct !== null || start === 0 || window >= TAIL_CAP) return last;
    window = Math.min(TAIL_CAP, window + TAIL_WINDOW);
  }
}

export interface TailTarget {
  pane: string;
  session: string;
  /** The pane's stored @agent_context_at, for a server without `-F`. */
  storedAt: number | null;
}

export interface TailWrite {
  pane: string;
  reading: RolloutReading;
  cmds: TmuxCommand[];
}

/** Per-process memory: which file belongs to a session, and what each file said at which size. */
export class RolloutTail {
  private readonly files = new Map<string, string>();
  private readonly memo = new Map<string, { key: string; reading: RolloutReading }>();
  /** Counters for tests: directory walks and file reads. */
  readonly counts = { walks: 0, reads: 0 };

  constructor(private readonly root: () => string | null) {}

  private fileOf(root: string, session: string): string | null {
    const cached = this.files.get(session);
    if (cached !== undefined && existsSync(cached)) return cached;
    this.counts.walks++;
    const found = findRollout(root, session);
    if (found === null) this.files.delete(session);
    else this.files.set(session, found);
    return found;
  }

  /** The writes for every target whose file changed since the last look. */
  collect(targets: readonly TailTarget[], now: number, guarded: boolean): TailWrite[] {
    const root = this.root();
    if (root === null || targets.length === 0) return [];
    const out: TailWrite[] = [];
    for (const t of targets) {
      const path = this.fileOf(root, t.session);
      if (path === null) continue;
      let reading: RolloutReading;
      try {
        const st = statSync(path, { bigint: true });
        const key = `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}`;
        if (this.memo.get(path)?.key === key) continue;
        this.counts.reads++;
        reading = tailFile(path, Number(st.size));
        this.memo.set(path, { key, reading });
      } catch {
        continue;
      }
      const cmds: TmuxCommand[] = [];
      if (reading.pct !== null) {
        cmds.push(...renderContextChain(t.pane, { pct: reading.pct, tokens: null, at: now }, { guarded, storedAt: t.storedAt }));
      }
      if (reading.model !== null) cmds.push(['set-option', '-p', '-t', t.pane, KEY.model, reading.model]);
      if (cmds.length) out.push({ pane: t.pane, reading, cmds });
    }
    return out;
  }
}

/** What the tail needs of a cycle's pane outcome. */
export interface TailPane {
  rec: { paneId: string; options: Partial<Record<string, string>> };
  stamp: { session: string | null } | null;
  path: string;
}

/**
 * The end-of-cycle step: tail every stamped Codex pane with a registered session, write what
 * changed, and let the pane's options (and so this cycle's rows) show what was written.
 */
export async function runRolloutTail(args: {
  tail: RolloutTail;
  manifests: readonly AgentManifest[];
  panes: readonly TailPane[];
  now: number;
  guarded: (pane: string) => Promise<boolean>;
  run: (argv: string[]) => Promise<boolean>;
  chain: (cmds: readonly TmuxCommand[]) => string[];
}): Promise<void> {
  const byPane = new Map<string, TailPane>();
  const targets: TailTarget[] = [];
  for (const p of args.panes) {
    const name = p.rec.options['@agent_name'];
    const session = p.stamp?.session ?? p.rec.options['@agent_session'];
    if (p.stamp === null || p.path === 'dead' || !name || !session) continue;
    if (!tailsRollout(args.manifests.find((m) => m.name === name))) continue;
    const at = Number(p.rec.options['@agent_context_at']);
    targets.push({ pane: p.rec.paneId, session, storedAt: Number.isFinite(at) ? at : null });
    byPane.set(p.rec.paneId, p);
  }
  if (!targets.length) return;
  const guarded = await args.guarded(targets[0]!.pane);
  for (const w of args.tail.collect(targets, args.now, guarded)) {
    if (!(await args.run(args.chain(w.cmds)))) continue;
    const o = byPane.get(w.pane)!.rec.options;
    const storedAt = Number(o['@agent_context_at']) || 0;
    if (w.reading.pct !== null && storedAt <= args.now) {
      o['@agent_context_pct'] = String(w.reading.pct);
      o['@agent_context_at'] = String(args.now);
      delete o['@agent_tokens'];
      delete o['@agent_tokens_at'];
    }
    if (w.reading.model !== null) o['@agent_model'] = w.reading.model;
  }
}
