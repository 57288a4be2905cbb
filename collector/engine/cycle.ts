// The poll cycle: read every pane of one tmux server, decide each agent pane's state, write the
// verdicts back under their guards, reconcile the rollups, and return the rows.
// Every one-shot verb runs one cycle; a long-lived collector runs them on a timer and on wake-ups.
//
// A cycle costs three tmux round trips whatever the pane count: one read (list-panes and the last
// poll time), one chain capturing every pane that needs a look, and one chain with every write.
// When a pane dies between them, its chain fails; the cycle then redoes that step pane by pane
// so one vanished pane never costs the others their verdict.

import type { AgentRow } from '../../shared/row.js';
import { compareLocalRows } from '../../shared/selectors.js';
import { fnv1a64 } from '../core/fnv.js';
import { fold } from '../core/fold.js';
import { anchorUpdate, identify, isIgnored, reaperDecision, type Identity } from '../core/identity.js';
import { subtree, type ProcEntry } from '../core/proc.js';
import { canReuseStamp } from '../core/reuse.js';
import { summaryOf } from '../core/rollup.js';
import { evaluate } from '../core/rules.js';
import { changesNothing, planFromVerdict, projectStamp } from '../core/stamp-plan.js';
import {
  chain,
  probeSupported,
  renderPlan,
  renderProbeRead,
  renderProbeUnset,
  renderRollups,
  renderSetpfProbe,
  type TmuxCommand,
} from '../core/stamp-render.js';
import { decodeStamp, KEY } from '../core/store-codec.js';
import type { AgentManifest, FoldConfig, StampedState, StampPlan, State } from '../core/types.js';
import { TmuxError } from '../tmux/errors.js';
import type { TmuxRunner } from '../tmux/runner.js';
import { LookBook, NOT_AGENT_SWEEP_MS, waitsOnClock } from './look-book.js';
import { parsePaneList, type PaneRecord } from './pane-list.js';
import { afterWrites, promptWrites, type PromptLook } from './prompt-writes.js';
import { codexRoot, RolloutTail, runRolloutTail } from './rollout-tail.js';
import { rowOf } from './rows.js';
import { attentionClearable, heartbeatVouches, LIST_CLIENTS_FORMAT, listingChain, seenByClients, stampStands } from './settled-read.js';
import { ServerFacts, storedSetpf } from './server-facts.js';
import { StillScreens } from './still-screens.js';
import { HookLiveness } from './hook-liveness.js';
import { TransitionRing } from './transition-ring.js';

export interface EngineOptions {
  runner: TmuxRunner;
  manifests: AgentManifest[];
  fold: FoldConfig;
  host: string;
  /** The processes under the given pane roots (more is fine). */
  readProcs: (roots: number[]) => Promise<ProcEntry[]>;
  now?: () => number;
  /** The outputs of `listingChain(true)`, read moments ago (by a quick status that declined): the first cycle's read. */
  firstListing?: readonly string[];
}

export interface PaneOutcome {
  rec: PaneRecord;
  /** What the store holds after this cycle (null: no stamp). */
  stamp: StampedState | null;
  identity: Identity | null;
  /** How the pane was handled, for doctor and the benchmark. */
  path: 'consumer' | 'reused' | 'captured' | 'registered' | 'removed' | 'ignored' | 'none' | 'dead' | 'quiet';
}

export interface CycleResult {
  now: number;
  rows: AgentRow[];
  panes: PaneOutcome[];
  stampede: boolean;
  produced: boolean;
  /** Output is watched and no pane waits on a look: the next timed cycle may come late. */
  settled: boolean;
}

/** Writes for one pane: they commit together, and are dropped together if the pane died. */
interface PaneWrites {
  outcome: PaneOutcome;
  cmds: TmuxCommand[];
}

/** A pane that needs a capture and a fold this cycle. */
interface Candidate {
  outcome: PaneOutcome;
  prev: StampedState | null;
  decodedOk: boolean;
  identity: Extract<Identity, { kind: 'agent' }>;
  storedAnchor: number | null;
}

/** The unguarded-writes warning is printed at most once per process, however many servers. */
let warnedUnguarded = false;

function rethrowUnlessFailed(e: unknown): void {
  if (!(e instanceof TmuxError) || e.kind !== 'failed') throw e;
}

export class Engine {
  readonly server: ServerFacts;
  private guarded: boolean | null = null;
  /** Pane root pids seen by the last cycle. */
  private roots = new Set<number>();
  /** Panes that painted since their last look (from %output): a fresh stamp must not hide them. */
  private painted = new Set<string>();
  /** The prompt each blocked pane showed at this process's last look, and when it looked. */
  private readonly prompts = new Map<string, PromptLook & { at: number }>();
  private readonly now: () => number;
  /** Whether this engine's server output is watched right now (set by a long-lived collector). */
  private watched: (() => boolean) | null = null;
  private lastCycleAt = 0;
  /** Per-pane looks of a watched engine: panes whose screens cannot have changed are not captured. */
  private readonly looks: LookBook;
  /** Capture claims a watched engine saw on still screens: the dwell counts from their next paint. */
  private readonly stills = new StillScreens();
  /** Hook-capable panes whose hooks are alive need no capture when their output goes quiet. */
  readonly liveness: HookLiveness;
  /** The last state changes this engine saw (`tma debug transitions`). */
  readonly transitions = new TransitionRing();
  /** Codex context gauges, read from its rollout files at the end of every cycle. */
  readonly rolloutTail = new RolloutTail(() => codexRoot(process.env));

  constructor(private readonly opts: EngineOptions) {
    this.server = new ServerFacts(opts.runner);
    this.now = opts.now ?? Date.now;
    this.looks = new LookBook({ pendingMs: opts.fold.freshnessMs });
    this.liveness = new HookLiveness({ hookDecayMs: opts.fold.hookDecayMs });
  }

  /**
   * A long-lived collector marks painted panes through `markPainted` while `live()` holds. Then a
   * pane is looked at when it painted, when its listing moved, while a hold waits on the clock, or
   * on the slow sweep; a stamp that would change nothing is not rewritten; and each cycle renews
   * the server's heartbeat (`@tma_collector_at`) that tells one-shot readers the stamps are current.
   */
  watchOutput(live: () => boolean): void {
    this.watched = live;
  }

  get watching(): boolean {
    return this.opts.fold.freshnessMs > 0 && this.watched !== null && this.watched();
  }

  /**
   * Renew the server heartbeat between cycles, while output is watched and a cycle finished
   * within `maxCycleAgeMs` (an engine whose cycles stall must stop vouching for the stamps).
   */
  async heartbeat(maxCycleAgeMs: number): Promise<void> {
    const now = this.now();
    if (!this.watching || now - this.lastCycleAt > maxCycleAgeMs) return;
    await this.tryRun(['set-option', '-s', KEY.collectorAt, String(now)]);
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

  /**
   * The prompt this process itself last saw on `pane` (null: none, or not looked at): what an act
   * decides on, since the `@tma_prompt_id` option may have been rewritten by another writer.
   */
  promptSeen(pane: string): (PromptLook & { at: number }) | null {
    return this.prompts.get(pane) ?? null;
  }

  private notePrompt(pane: string, look: PromptLook | null, now: number): void {
    if (look === null) this.prompts.delete(pane);
    else this.prompts.set(pane, { ...look, at: now });
  }

  /** These panes' screens may have changed: the next cycle looks at them whatever their stamps say. */
  markPainted(panes: readonly string[]): void {
    const at = this.now();
    for (const p of panes) {
      this.painted.add(p);
      this.stills.painted(p, at);
    }
  }

  /** A hook event for this pane reached the collector: its hooks are alive. */
  hookEvent(pane: string): void {
    this.liveness.hookEvent(pane, this.now());
  }

  /**
   * A painted pane of a watched engine (a quiet edge): false when a hook claim its live hooks keep
   * current makes the capture unnecessary (see hook-liveness.ts).
   */
  private edgeNeedsLook(rec: PaneRecord, prev: StampedState | null, now: number): boolean {
    const name = rec.options['@agent_name'];
    const hookCapable = !!rec.options['@agent_session'] || (!!name && !!this.opts.manifests.find((m) => m.name === name)?.hooks?.covers.length);
    return this.liveness.edge(rec.paneId, { hookCapable, prev, now });
  }

  /** `recapture`: capture and fold this pane whatever its stamp's age (the broker's re-check). */
  async cycle(opts: { recapture?: string } = {}): Promise<CycleResult> {
    const { runner, fold: cfg } = this.opts;
    const now = this.now();
    const watching = this.watching;
    // A one-shot verb's only cycle reads the server's facts in the same tmux call (one spawn less).
    const factsToo = !this.server.known;
    const primed = factsToo ? this.opts.firstListing : undefined;
    this.opts.firstListing = undefined;
    const listing = primed ? Promise.resolve(primed) : runner.runChain(listingChain(factsToo));
    // While tmux lists the panes, read the process trees under last cycle's pane roots: a
    // long-lived engine's roots rarely change, and the two reads then run on different cores.
    // A watched engine mostly needs no process facts at all, so it reads them only when it does.
    const early = this.roots.size && !watching ? this.opts.readProcs([...this.roots]).catch(() => null) : null;
    const [listOut, lastPollOut, collectorAtOut, factsOut] = await listing;
    if (factsToo && factsOut !== undefined) this.server.prime(factsOut);
    const records = parsePaneList(listOut ?? '');
    const painted = this.painted;
    this.painted = new Set();
    const roots = records.map((r) => r.panePid);
    const rootsKnown = roots.every((r) => this.roots.has(r));
    this.roots = new Set(roots);
    const info = await this.server.get();
    const lastPoll = Number((lastPollOut ?? '').trim()) || 0;
    // Many status lines firing in the same second: only the first one does the work.
    const stampede = lastPoll !== 0 && Math.floor(now / 1000) === Math.floor(lastPoll / 1000);
    // A collector that watches this server's output vouches for every stamp while its heartbeat
    // is fresh: it looks at a pane as soon as its screen moves, and rewrites nothing otherwise.
    // Judged at the moment of the read: a heartbeat or stamp written while tmux answered is not from the future.
    const readAt = Math.max(now, this.now());
    const vouched = !watching && heartbeatVouches(collectorAtOut, readAt, cfg.freshnessMs);

    // A watched engine leaves quiet panes alone, and walks only the process trees of the others.
    const quiet = new Set<string>();
    if (watching) {
      for (const r of records) if (!painted.has(r.paneId) && opts.recapture !== r.paneId && this.looks.quiet(r, now)) quiet.add(r.paneId);
    }
    const lookRoots = watching ? records.filter((r) => !quiet.has(r.paneId)).map((r) => r.panePid) : roots;

    let procs: ProcEntry[] | null = null;
    const outcomes: PaneOutcome[] = [];
    const writes: PaneWrites[] = [];
    const candidates: Candidate[] = [];

    for (const rec of records) {
      const decoded = decodeStamp(rec.options);
      const prev = decoded.ok ? decoded.stamp : null;
      const outcome: PaneOutcome = { rec, stamp: prev, identity: null, path: 'consumer' };
      outcomes.push(outcome);

      if (isIgnored(rec.options['@agent_ignore'])) {
        outcome.stamp = null;
        outcome.path = 'ignored';
        if (prev) writes.push({ outcome, cmds: this.render(rec, { kind: 'remove' }, prev) });
        continue;
      }

      const fresh = stampStands(prev, readAt, vouched, cfg.freshnessMs, watching ? 0 : rec.windowActivity);
      const forced = opts.recapture === rec.paneId;
      if (watching) this.liveness.observe(rec.paneId, prev);
      let repaint = painted.has(rec.paneId);
      // An edge a live hook claim answers is no reason to look: the pane is judged as if unpainted.
      if (repaint && watching && !forced && !this.edgeNeedsLook(rec, prev, now)) {
        repaint = false;
        if (this.looks.quiet(rec, now)) quiet.add(rec.paneId);
      }
      if (quiet.has(rec.paneId)) {
        outcome.path = 'quiet';
        continue;
      }
      if (!forced && !repaint && (fresh || (stampede && prev))) continue;

      procs ??= (rootsKnown && (await early)) || (await this.opts.readProcs(lookRoots));
      const storedAnchor = Number(rec.options['@tma_title_match_pid']) || null;
      const id = identify({
        paneCurrentCommand: rec.currentCommand,
        title: rec.title,
        panePid: rec.panePid,
        procs,
        manifests: this.opts.manifests,
        storedAnchorPid: storedAnchor,
        storedAgentName: rec.options['@agent_name'] ?? null,
        registration:
          prev && rec.options['@agent_name'] && rec.options['@agent_session']
            ? { name: rec.options['@agent_name'], session: rec.options['@agent_session'] }
            : null,
      });
      outcome.identity = id;

      if (id.kind !== 'agent') {
        outcome.stamp = null;
        outcome.path = prev ? 'removed' : 'none';
        this.looks.looked(rec.paneId, now, false, prev ? undefined : NOT_AGENT_SWEEP_MS);
        if (prev) writes.push({ outcome, cmds: this.render(rec, { kind: 'remove' }, prev) });
        else if (storedAnchor !== null) writes.push({ outcome, cmds: [['set-option', '-p', '-u', '-t', rec.paneId, KEY.titleMatchPid]] });
        continue;
      }

      if (id.pid === 0) {
        // Registered, but nothing we can walk (a container, a remote shell): hold, reap when dead.
        const d = reaperDecision({ procs: subtree(procs, rec.panePid), marker: Number(rec.options['@tma_reg_dead_since']) || null, now });
        outcome.path = 'registered';
        if (d === 'remove') {
          outcome.stamp = null;
          outcome.path = 'removed';
          writes.push({ outcome, cmds: this.render(rec, { kind: 'remove' }, prev) });
        } else if (d === 'set-marker') {
          writes.push({ outcome, cmds: [['set-option', '-p', '-t', rec.paneId, KEY.regDeadSince, String(now)]] });
        } else if (d === 'unset-marker') {
          writes.push({ outcome, cmds: [['set-option', '-p', '-u', '-t', rec.paneId, KEY.regDeadSince]] });
        }
        continue;
      }

      if (!forced && !repaint && prev && canReuseStamp(prev, rec.windowActivity, id.foregroundIsAgent, cfg, now)) {
        outcome.path = 'reused';
        this.looks.looked(rec.paneId, now, false);
        continue;
      }
      candidates.push({ outcome, prev, decodedOk: decoded.ok, identity: id, storedAnchor });
    }

    if (candidates.length) {
      const guarded = await this.setpfSupported(candidates[0]!.outcome.rec.paneId);
      const shots = await this.captureAll(candidates.map((c) => c.outcome.rec.paneId));
      candidates.forEach((c, i) => {
        const shot = shots[i];
        if (shot === null || shot === undefined) {
          c.outcome.stamp = null;
          c.outcome.path = 'dead';
          return;
        }
        writes.push({ outcome: c.outcome, cmds: this.decide(c, shot, now, guarded, watching) });
      });
    }

    // The rollups and poll markers ride in the same tmux call as the stamps; they are worked out
    // as if every write lands, and again after a failed call has been retried pane by pane.
    const producing = () => writes.some((w) => w.outcome.path !== 'dead' && w.outcome.path !== 'ignored');
    const closingWrites = (): TmuxCommand[] => {
      const cmds = this.rollupDrift(outcomes);
      if (producing()) cmds.push(['set-option', '-s', KEY.lastPoll, String(now)]);
      if (watching) cmds.push(['set-option', '-s', KEY.collectorAt, String(now)]);
      return cmds;
    };
    const closing = (await this.applyAll(writes, closingWrites())) ? [] : closingWrites();
    const produced = producing();
    const live = new Set(outcomes.filter((o) => o.path !== 'dead').map((o) => o.rec.paneId));
    this.looks.keepOnly(live);
    this.stills.keepOnly(live);
    this.liveness.keepOnly(live);
    for (const p of this.prompts.keys()) if (!live.has(p)) this.prompts.delete(p);
    // A pane that died since the listing fails the chain from its command on; the rest still count.
    if (closing.length && !(await this.tryRun(chain(closing)))) for (const cmd of closing) await this.tryRun(cmd);
    if (!stampede) await this.clearSeenAttention(outcomes);
    await runRolloutTail({
      tail: this.rolloutTail, manifests: this.opts.manifests, panes: outcomes, now,
      guarded: (pane) => this.setpfSupported(pane), run: (argv) => this.tryRun(argv), chain,
    });

    const rows: AgentRow[] = [];
    for (const o of outcomes) {
      if (!o.stamp) continue;
      const agent = o.identity?.kind === 'agent' ? o.identity.manifest.name : o.rec.options['@agent_name'] ?? '';
      rows.push(rowOf(o.rec, o.stamp, agent, { server: info.socketPath, host: this.opts.host, now }));
    }
    rows.sort(compareLocalRows);
    this.transitions.observe(outcomes.map((o) => ({ pane: o.rec.paneId, stamp: o.stamp })));
    this.lastCycleAt = now;
    const settled = watching && !this.looks.anyPending() && outcomes.every((o) => o.path === 'quiet' || o.path === 'ignored' || o.path === 'none');
    return { now, rows, panes: outcomes, stampede, produced, settled };
  }

  /** Fold one captured pane and return its writes; the outcome learns what the store will hold. */
  private decide(c: Candidate, shot: { tail: string; title: string }, now: number, guarded: boolean, watching: boolean): TmuxCommand[] {
    const { rec } = c.outcome;
    const id = c.identity;
    const tail = shot.tail;
    const snap = { title: shot.title, tail, scrollPosition: rec.scrollPosition, visibleHeight: rec.height || null, capturedAt: now };
    const ev = evaluate(id.manifest, snap);
    const facts = { pid: id.pid, foregroundIsAgent: id.foregroundIsAgent, scrolled: (rec.scrollPosition ?? 0) > 0, historyView: ev.historyView };
    const prior = this.liveness.prior(rec.paneId, this.stills.prior(rec.paneId, c.prev, now, watching));
    const verdict = fold(prior, facts, ev.evidence, id.manifest, this.opts.fold, now);
    let plan = planFromVerdict(verdict, { pid: id.pid, name: id.manifest.name, hash: fnv1a64(tail), now });
    // A demoted pane's stale hook claim is no longer protected in the store either; a hook claim
    // that landed after the listing still is.
    if (c.prev?.source === 'hook' && prior?.source !== 'hook' && plan.kind === 'publish' && !plan.episodeReset) {
      plan = { ...plan, guard: { kind: 'overrule_claim', claimAt: c.prev.evidenceAt } };
    }
    const projected = c.decodedOk ? projectStamp(c.prev, plan, { guarded }) : null;
    this.looks.looked(rec.paneId, now, waitsOnClock(verdict));
    // A watched pane whose stamp would come back as it is keeps it: the look is remembered here,
    // and the server heartbeat tells one-shot readers the old stamp time still stands.
    const unchanged =
      watching &&
      changesNothing(c.prev, projected, {
        now, name: id.manifest.name, storedName: rec.options['@agent_name'] ?? null,
        renewHookMs: Math.min(this.opts.fold.hookDecayMs, this.opts.fold.blockedDecayMs) / 2,
      });
    const cmds = unchanged ? [] : this.render(rec, plan, c.prev, guarded);
    const anchor = anchorUpdate(id, c.storedAnchor);
    if (anchor.kind === 'set') cmds.push(['set-option', '-p', '-t', rec.paneId, KEY.titleMatchPid, String(anchor.pid)]);
    else if (anchor.kind === 'unset') cmds.push(['set-option', '-p', '-u', '-t', rec.paneId, KEY.titleMatchPid]);
    c.outcome.path = 'captured';
    // Over a stamp we could not read, the guards decide against values we never saw: keep the
    // pane out of rows and counts until a later cycle reads back what actually landed.
    c.outcome.stamp = unchanged ? c.prev : projected;
    this.stills.looked(rec.paneId, verdict, c.outcome.stamp, watching, now);
    this.liveness.wrote(rec.paneId, c.outcome.stamp);
    const prompt = promptWrites(rec, c.outcome.stamp, id.manifest, snap, this.prompts.get(rec.paneId) ?? null);
    this.notePrompt(rec.paneId, prompt.look ?? null, now);
    if (prompt.length) c.outcome.rec = { ...rec, options: afterWrites(rec.options, prompt) };
    return [...cmds, ...prompt];
  }

  private render(rec: PaneRecord, plan: StampPlan, prev: StampedState | null, guarded = true): TmuxCommand[] {
    return renderPlan(rec.paneId, plan, { guarded, prev });
  }

  /**
   * Every capture in one chain; if a pane died in between, capture one by one. null = dead.
   * The title is read again next to its screen: the listing's title is a moment older, and an
   * agent that changed both in between (a spinner title and its screen) would otherwise be judged
   * on a new screen under an old title.
   */
  private async captureAll(panes: string[]): Promise<({ tail: string; title: string } | null)[]> {
    const cmds = (p: string) => [
      ['capture-pane', '-p', '-e', '-t', p, '-S', '-50'],
      ['display-message', '-p', '-t', p, '#{pane_title}'],
    ];
    const pair = (out: string[], i: number) => ({ tail: out[2 * i] ?? '', title: (out[2 * i + 1] ?? '').replace(/\n$/, '') });
    try {
      const out = await this.opts.runner.runChain(panes.flatMap(cmds));
      return panes.map((_, i) => pair(out, i));
    } catch (e) {
      rethrowUnlessFailed(e);
    }
    const out: ({ tail: string; title: string } | null)[] = [];
    for (const p of panes) {
      try {
        out.push(pair(await this.opts.runner.runChain(cmds(p)), 0));
      } catch (e) {
        rethrowUnlessFailed(e);
        out.push(null);
      }
    }
    return out;
  }

  /**
   * Every pane's writes in one chain, then `closing`; true when that one call landed. On failure,
   * pane by pane, marking the ones that died, and `closing` is left to the caller.
   */
  private async applyAll(writes: PaneWrites[], closing: TmuxCommand[]): Promise<boolean> {
    const all = writes.filter((w) => w.cmds.length);
    if (!all.length) return false;
    try {
      await this.opts.runner.run(chain([...all.flatMap((w) => w.cmds), ...closing]));
      return true;
    } catch (e) {
      rethrowUnlessFailed(e);
    }
    for (const w of all) {
      try {
        await this.opts.runner.run(chain(w.cmds));
      } catch (e) {
        rethrowUnlessFailed(e);
        w.outcome.stamp = null;
        w.outcome.path = 'dead';
      }
    }
    return false;
  }

  private async tryRun(argv: string[]): Promise<boolean> {
    try {
      await this.opts.runner.run(argv);
      return true;
    } catch (e) {
      rethrowUnlessFailed(e);
      return false;
    }
  }

  /** The `-F` probe, cached per server in @tma_setpf_ok. A failed probe assumes guarded, uncached. */
  async setpfSupported(pane: string): Promise<boolean> {
    if (this.guarded !== null) return this.guarded;
    let ok: boolean;
    try {
      // The server's facts carry the cached answer when it is stored (no tmux call of its own).
      const stored = this.server.peek()?.setpfOk ?? storedSetpf(await this.opts.runner.run(['show-options', '-sqv', KEY.setpfOk]));
      if (stored !== null) ok = stored;
      else {
        const outs = await this.opts.runner.runChain([renderSetpfProbe(pane), renderProbeRead(pane), renderProbeUnset(pane)]);
        ok = probeSupported(outs[1] ?? '');
        // The answer stands even if caching it fails; the next process just probes again.
        await this.tryRun(['set-option', '-s', KEY.setpfOk, ok ? '1' : '0']);
      }
    } catch (e) {
      if (e instanceof TmuxError && e.kind === 'server-gone') throw e;
      return true;
    }
    // Every process that degrades says so once, whether it probed or found the cached answer:
    // the process that probed first is often a status line whose stderr nobody reads.
    if (!ok && !warnedUnguarded) {
      warnedUnguarded = true;
      process.stderr.write('tma: this tmux stores set-option -F formats literally; writes are unguarded\n');
    }
    return (this.guarded = ok);
  }

  /** Recompute every window and session rollup from this cycle; the writes where it drifted. */
  private rollupDrift(outcomes: PaneOutcome[]): TmuxCommand[] {
    type Scope = { pane: string; states: State[]; stored: string };
    const windows = new Map<string, Scope>();
    const sessions = new Map<string, Scope>();
    const scope = (m: Map<string, Scope>, key: string, o: PaneOutcome, stored: string): Scope => {
      let sc = m.get(key);
      if (!sc) m.set(key, (sc = { pane: o.rec.paneId, states: [], stored }));
      return sc;
    };
    for (const o of outcomes) {
      if (o.path === 'dead') continue;
      const w = scope(windows, `${o.rec.sessionName}\u0000${o.rec.windowIndex}`, o, o.rec.windowSummary);
      const s = scope(sessions, o.rec.sessionName, o, o.rec.sessionSummary);
      if (o.stamp) {
        w.states.push(o.stamp.state);
        s.states.push(o.stamp.state);
      }
    }
    const cmds: TmuxCommand[] = [];
    for (const w of windows.values()) {
      const v = summaryOf(w.states);
      if (v !== w.stored) cmds.push(renderRollups(w.pane, v, '')[0]!);
    }
    for (const s of sessions.values()) {
      const v = summaryOf(s.states);
      if (v !== s.stored) cmds.push(renderRollups(s.pane, '', v)[1]!);
    }
    return cmds;
  }

  /**
   * Ordered-input clear: a human client that shows a pane and typed after the episode began has
   * seen it. Strictly later second only, so input in the same second never clears.
   */
  private async clearSeenAttention(outcomes: PaneOutcome[]): Promise<void> {
    const flagged = outcomes.filter((o) => attentionClearable(o.stamp)).map((o) => ({ o, paneId: o.rec.paneId, stamp: o.stamp! }));
    if (!flagged.length) return;
    let out: string;
    try {
      out = await this.opts.runner.run(['list-clients', '-F', LIST_CLIENTS_FORMAT]);
    } catch (e) {
      rethrowUnlessFailed(e);
      return;
    }
    const clear = seenByClients(flagged, out).map((f) => f.o);
    if (!clear.length) return;
    const ok = await this.tryRun(chain(clear.map((o) => ['set-option', '-p', '-u', '-t', o.rec.paneId, KEY.attention])));
    if (ok) for (const o of clear) o.stamp = { ...o.stamp!, attention: false };
  }
}
