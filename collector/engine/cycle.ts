// The poll cycle: read every pane of one tmux server, decide each agent pane's state, write the
// verdicts back under their guards, reconcile the rollups, and return the rows.
// Every one-shot verb runs one cycle; a long-lived collector runs them on a timer and on wake-ups.

import { compareLocalRows } from '../../shared/selectors.js';
import type { AgentRow } from '../../shared/row.js';
import { fnv1a64 } from '../core/fnv.js';
import { fold } from '../core/fold.js';
import { anchorUpdate, identify, isIgnored, reaperDecision, type Identity } from '../core/identity.js';
import { subtree, type ProcEntry } from '../core/proc.js';
import { canReuseStamp } from '../core/reuse.js';
import { summaryOf } from '../core/rollup.js';
import { evaluate } from '../core/rules.js';
import { planFromVerdict, projectStamp } from '../core/stamp-plan.js';
import { chain, renderPlan, renderRollups } from '../core/stamp-render.js';
import { decodeStamp, episodeAt, isInProgress, KEY } from '../core/store-codec.js';
import type { AgentManifest, FoldConfig, StampedState, StampPlan, State } from '../core/types.js';
import { TmuxError } from '../tmux/errors.js';
import type { TmuxRunner } from '../tmux/runner.js';
import { LIST_PANES_FORMAT, parsePaneList, type PaneRecord } from './pane-list.js';
import { rowOf } from './rows.js';
import { ServerFacts } from './server-facts.js';

export interface EngineOptions {
  runner: TmuxRunner;
  manifests: AgentManifest[];
  fold: FoldConfig;
  host: string;
  readProcs: () => Promise<ProcEntry[]>;
  now?: () => number;
}

export interface PaneOutcome {
  rec: PaneRecord;
  /** What the store holds after this cycle (null: no stamp). */
  stamp: StampedState | null;
  identity: Identity | null;
  /** How the pane was handled, for doctor and the benchmark. */
  path: 'consumer' | 'reused' | 'captured' | 'registered' | 'removed' | 'ignored' | 'none' | 'dead';
}

export interface CycleResult {
  now: number;
  rows: AgentRow[];
  panes: PaneOutcome[];
  stampede: boolean;
  produced: boolean;
}

const MAX_LAST_POLL = Number.MAX_SAFE_INTEGER;

export class Engine {
  readonly server: ServerFacts;
  private guarded: boolean | null = null;
  private readonly now: () => number;

  constructor(private readonly opts: EngineOptions) {
    this.server = new ServerFacts(opts.runner);
    this.now = opts.now ?? Date.now;
  }

  get runner(): TmuxRunner {
    return this.opts.runner;
  }

  get manifests(): AgentManifest[] {
    return this.opts.manifests;
  }

  setManifests(m: AgentManifest[]): void {
    this.opts.manifests = m;
  }

  async cycle(): Promise<CycleResult> {
    const { runner, fold: cfg } = this.opts;
    const now = this.now();
    const [listOut, lastPollOut] = await runner.runChain([
      ['list-panes', '-a', '-F', LIST_PANES_FORMAT],
      ['show-options', '-sqv', KEY.lastPoll],
    ]);
    const records = parsePaneList(listOut ?? '');
    const info = await this.server.get();
    const lastPoll = Number((lastPollOut ?? '').trim()) || 0;
    const stampede = lastPoll !== 0 && lastPoll < MAX_LAST_POLL && Math.floor(now / 1000) === Math.floor(lastPoll / 1000);

    let procs: ProcEntry[] | null = null;
    const outcomes: PaneOutcome[] = [];
    let produced = false;

    for (const rec of records) {
      const decoded = decodeStamp(rec.options);
      const prev = decoded.ok ? decoded.stamp : null;

      if (isIgnored(rec.options['@agent_ignore'])) {
        if (prev) await this.apply(rec, { kind: 'remove' }, prev);
        outcomes.push({ rec, stamp: null, identity: null, path: 'ignored' });
        continue;
      }

      const fresh =
        prev !== null &&
        !isInProgress(prev) &&
        prev.stampedAt <= now &&
        now - prev.stampedAt < cfg.freshnessMs;
      if (fresh || (stampede && prev)) {
        outcomes.push({ rec, stamp: prev, identity: null, path: 'consumer' });
        continue;
      }

      procs ??= await this.opts.readProcs();
      const registration =
        prev && rec.options['@agent_name'] && rec.options['@agent_session']
          ? { name: rec.options['@agent_name'], session: rec.options['@agent_session'] }
          : null;
      const storedAnchor = Number(rec.options['@tma_title_match_pid']) || null;
      const id = identify({
        paneCurrentCommand: rec.currentCommand,
        title: rec.title,
        panePid: rec.panePid,
        procs,
        manifests: this.opts.manifests,
        storedAnchorPid: storedAnchor,
        storedAgentName: rec.options['@agent_name'] ?? null,
        registration,
      });

      if (id.kind !== 'agent') {
        if (prev) {
          await this.apply(rec, { kind: 'remove' }, prev);
          produced = true;
          outcomes.push({ rec, stamp: null, identity: id, path: 'removed' });
        } else {
          if (storedAnchor !== null) await this.tryRun(['set-option', '-p', '-u', '-t', rec.paneId, KEY.titleMatchPid]);
          outcomes.push({ rec, stamp: null, identity: id, path: 'none' });
        }
        continue;
      }

      if (id.pid === 0) {
        const handled = await this.reap(rec, procs, now, prev);
        outcomes.push({ rec, stamp: handled ? prev : null, identity: id, path: handled ? 'registered' : 'removed' });
        continue;
      }

      if (prev && canReuseStamp(prev, rec.windowActivity, id.foregroundIsAgent, cfg, now)) {
        outcomes.push({ rec, stamp: prev, identity: id, path: 'reused' });
        continue;
      }

      let tail: string;
      try {
        tail = await runner.run(['capture-pane', '-p', '-e', '-t', rec.paneId, '-S', '-50']);
      } catch (e) {
        if (e instanceof TmuxError && e.kind !== 'failed') throw e;
        outcomes.push({ rec, stamp: null, identity: id, path: 'dead' });
        continue;
      }
      const hash = fnv1a64(tail);
      const snap = {
        title: rec.title,
        tail,
        scrollPosition: rec.scrollPosition,
        visibleHeight: rec.height || null,
        capturedAt: now,
      };
      const ev = evaluate(id.manifest, snap);
      const verdict = fold(
        prev,
        {
          pid: id.pid,
          foregroundIsAgent: id.foregroundIsAgent,
          scrolled: (rec.scrollPosition ?? 0) > 0,
          historyView: ev.historyView,
        },
        ev.evidence,
        id.manifest,
        cfg,
        now,
      );
      const plan = planFromVerdict(verdict, { pid: id.pid, name: id.manifest.name, hash, now });
      const guarded = await this.setpfSupported(rec.paneId);
      if (!(await this.apply(rec, plan, prev))) {
        outcomes.push({ rec, stamp: null, identity: id, path: 'dead' });
        continue;
      }
      const anchor = anchorUpdate(id, storedAnchor);
      if (anchor.kind === 'set') await this.tryRun(['set-option', '-p', '-t', rec.paneId, KEY.titleMatchPid, String(anchor.pid)]);
      else if (anchor.kind === 'unset') await this.tryRun(['set-option', '-p', '-u', '-t', rec.paneId, KEY.titleMatchPid]);
      produced = true;
      // A hold on a first sight leaves nothing stored; project what the server will hold. Over a
      // stamp we could not read, the guards decide against values we never saw, so the pane stays
      // out of rows and counts until a later cycle reads back what actually landed.
      const stamp = decoded.ok ? projectStamp(prev, plan, { guarded }) : null;
      outcomes.push({ rec, stamp, identity: id, path: 'captured' });
    }

    await this.reconcileRollups(outcomes);
    if (!stampede) await this.clearSeenAttention(outcomes);
    if (produced) await this.tryRun(['set-option', '-s', KEY.lastPoll, String(now)]);

    const rows: AgentRow[] = [];
    for (const o of outcomes) {
      if (!o.stamp) continue;
      const agent = o.identity?.kind === 'agent' ? o.identity.manifest.name : o.rec.options['@agent_name'] ?? '';
      rows.push(rowOf(o.rec, o.stamp, agent, { server: info.socketPath, host: this.opts.host, now }));
    }
    rows.sort(compareLocalRows);
    return { now, rows, panes: outcomes, stampede, produced };
  }

  /** Run a stamp plan as one tmux invocation. False when the pane died under us. */
  private async apply(rec: PaneRecord, plan: StampPlan, prev: StampedState | null): Promise<boolean> {
    const guarded = plan.kind === 'publish' ? await this.setpfSupported(rec.paneId) : true;
    const cmds = renderPlan(rec.paneId, plan, { guarded, prev });
    try {
      await this.opts.runner.run(chain(cmds));
      return true;
    } catch (e) {
      if (e instanceof TmuxError && e.kind !== 'failed') throw e;
      return false;
    }
  }

  private async tryRun(argv: string[]): Promise<boolean> {
    try {
      await this.opts.runner.run(argv);
      return true;
    } catch (e) {
      if (e instanceof TmuxError && e.kind !== 'failed') throw e;
      return false;
    }
  }

  /** A registered pane whose agent we cannot walk: hold its stamp, reap it once only shells remain. */
  private async reap(rec: PaneRecord, procs: ProcEntry[], now: number, prev: StampedState | null): Promise<boolean> {
    const marker = Number(rec.options['@tma_reg_dead_since']) || null;
    const d = reaperDecision({ procs: subtree(procs, rec.panePid), marker, now });
    if (d === 'remove') {
      await this.apply(rec, { kind: 'remove' }, prev);
      return false;
    }
    if (d === 'set-marker') await this.tryRun(['set-option', '-p', '-t', rec.paneId, KEY.regDeadSince, String(now)]);
    if (d === 'unset-marker') await this.tryRun(['set-option', '-p', '-u', '-t', rec.paneId, KEY.regDeadSince]);
    return true;
  }

  /** The `-F` probe, cached per server in @tma_setpf_ok. A failed probe assumes guarded, uncached. */
  async setpfSupported(pane: string): Promise<boolean> {
    if (this.guarded !== null) return this.guarded;
    const { renderSetpfProbe, renderProbeRead, renderProbeUnset, probeSupported } = await import('../core/stamp-render.js');
    try {
      const cached = (await this.opts.runner.run(['show-options', '-sqv', KEY.setpfOk])).trim();
      if (cached === '1' || cached === '0') return (this.guarded = cached === '1');
      const outs = await this.opts.runner.runChain([renderSetpfProbe(pane), renderProbeRead(pane), renderProbeUnset(pane)]);
      const ok = probeSupported(outs[1] ?? '');
      await this.opts.runner.run(['set-option', '-s', KEY.setpfOk, ok ? '1' : '0']);
      if (!ok) process.stderr.write('tma: this tmux stores set-option -F formats literally; writes are unguarded\n');
      return (this.guarded = ok);
    } catch (e) {
      if (e instanceof TmuxError && e.kind === 'server-gone') throw e;
      return true;
    }
  }

  /** Recompute every window and session rollup from this cycle and write only where it drifted. */
  private async reconcileRollups(outcomes: PaneOutcome[]): Promise<void> {
    const windows = new Map<string, { pane: string; states: State[]; stored: string }>();
    const sessions = new Map<string, { pane: string; states: State[]; stored: string }>();
    for (const o of outcomes) {
      const wkey = `${o.rec.sessionName}\u0000${o.rec.windowIndex}`;
      const w = windows.get(wkey) ?? { pane: o.rec.paneId, states: [], stored: o.rec.windowSummary };
      const s = sessions.get(o.rec.sessionName) ?? { pane: o.rec.paneId, states: [], stored: o.rec.sessionSummary };
      if (o.stamp) {
        w.states.push(o.stamp.state);
        s.states.push(o.stamp.state);
      }
      windows.set(wkey, w);
      sessions.set(o.rec.sessionName, s);
    }
    const cmds: string[][] = [];
    for (const w of windows.values()) {
      const v = summaryOf(w.states);
      if (v !== w.stored) cmds.push(renderRollups(w.pane, v, '')[0]!);
    }
    for (const s of sessions.values()) {
      const v = summaryOf(s.states);
      if (v !== s.stored) cmds.push(renderRollups(s.pane, '', v)[1]!);
    }
    if (cmds.length) await this.tryRun(chain(cmds));
  }

  /**
   * Ordered-input clear: a human client that shows a pane and typed after the episode began has
   * seen it. Strictly later second only, so input in the same second never clears.
   */
  private async clearSeenAttention(outcomes: PaneOutcome[]): Promise<void> {
    const flagged = outcomes.filter((o) => o.stamp?.attention && episodeAt(o.stamp) !== 0);
    if (!flagged.length) return;
    let out: string;
    try {
      out = await this.opts.runner.run(['list-clients', '-F', '#{pane_id}\u001f#{client_activity}\u001f#{client_control_mode}']);
    } catch (e) {
      if (e instanceof TmuxError && e.kind === 'server-gone') throw e;
      return;
    }
    const seen = new Map<string, number>();
    for (const line of out.split('\n')) {
      const [pane, activity, control] = line.split('\u001f');
      if (!pane || !/^\d+$/.test(activity ?? '') || (control ?? '0') !== '0') continue;
      seen.set(pane, Math.max(seen.get(pane) ?? 0, Number(activity)));
    }
    const clear = flagged.filter((o) => {
      const act = seen.get(o.rec.paneId);
      return act !== undefined && act * 1000 > episodeAt(o.stamp!);
    });
    if (!clear.length) return;
    const ok = await this.tryRun(chain(clear.map((o) => ['set-option', '-p', '-u', '-t', o.rec.paneId, KEY.attention])));
    if (ok) for (const o of clear) o.stamp = { ...o.stamp!, attention: false };
  }
}
