// The poll cycle: read every pane of one tmux server, decide each agent pane's state, write the
// verdicts back under their guards, reconcile the rollups, and return the rows.
// Every one-shot verb runs one cycle; a long-lived collector runs them on a timer and on wake-ups.
//
// A cycle is a sequence of steps, each below or in a file of its own: read the listing, triage
// every pane (triage.ts, pure), look at the ones that need it (capture and fold, fold-pane.ts),
// stamp the writes, close (rollups, poll marker, heartbeat, rollup-drift.ts), clear attention a
// person has seen, tail Codex rollouts, and publish the rows.
//
// tmux round trips (each one tmux client, or one control-mode line): one read (the listing, the
// last poll time, the heartbeat, and on an engine's first cycle the server's facts), then one
// chain capturing every pane that needs a look, then one chain with every write and the closing
// writes; a step with nothing to do costs nothing, so a one-shot cycle whose stamps all stand
// spends only the read, and a watched one the read and its heartbeat write
// (test/unit/cycle-tmux-calls.test.ts counts a one-shot cycle's calls). More come on
// top: probing `set-option -F` on a server with no stored answer (three calls, once per server),
// reading the clients when a stamp carries attention a person may have cleared (and unsetting
// it), and one write per Codex pane whose context gauge moved. When a pane dies between the read
// and a chain, that chain fails; the step is then redone pane by pane (collector/tmux/batch.ts)
// so one vanished pane never costs the others their verdict, and the closing writes follow on
// their own.

import type { AgentRow } from '../../shared/row.js';
import { compareLocalRows } from '../../shared/selectors.js';
import { isIgnored } from '../core/identity.js';
import type { ProcEntry } from '../core/proc.js';
import { chain, type TmuxCommand } from '../core/stamp-render.js';
import { decodeStamp, KEY } from '../core/store-codec.js';
import type { AgentManifest, FoldConfig, StampedState } from '../core/types.js';
import { runTogetherOrEach, runUnlessFailed } from '../tmux/batch.js';
import { captureScreens } from '../tmux/capture.js';
import type { TmuxRunner } from '../tmux/runner.js';
import { clearSeenAttention } from './attention-clear.js';
import { foldPane } from './fold-pane.js';
import { HookLiveness } from './hook-liveness.js';
import { LookBook, waitsOnClock } from './look-book.js';
import type { CycleResult, PaneOutcome, PaneWrites } from './outcome.js';
import { parsePaneList, type PaneRecord } from './pane-list.js';
import type { PromptLook } from './prompt-writes.js';
import { codexRoot, RolloutTail, runRolloutTail } from './rollout-tail.js';
import { rollupDrift } from './rollup-drift.js';
import { rowOf } from './rows.js';
import { heartbeatVouches, listingChain } from './settled-read.js';
import { ServerFacts, type ServerInfo } from './server-facts.js';
import { SetpfProbe } from './setpf-probe.js';
import { StillScreens } from './still-screens.js';
import { TransitionRing } from './transition-ring.js';
import { triage, type AgentIdentity, type TriageInput } from './triage.js';

export type { CycleResult, PaneOutcome } from './outcome.js';

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
  /** The environment the engine consults (where Codex keeps its rollouts); the caller's process's if absent. */
  env?: NodeJS.ProcessEnv;
  /** Where a warning line goes (it ends in a newline); the caller's process's stderr if absent. */
  warn?: (line: string) => void;
}

/** What the cycle's first read found, and what it makes of it. */
interface Listing {
  records: PaneRecord[];
  /** Panes marked painted since the last cycle. */
  painted: Set<string>;
  info: ServerInfo;
  stampede: boolean;
  readAt: number;
  vouched: boolean;
  /** The process table under last cycle's roots, read while tmux listed (null: not read). */
  early: Promise<ProcEntry[] | null> | null;
  /** Every pane root was a root last cycle too: the early read covers them. */
  rootsKnown: boolean;
  roots: number[];
}

/** A pane that needs a capture and a fold this cycle. */
interface Candidate {
  outcome: PaneOutcome;
  prev: StampedState | null;
  decodedOk: boolean;
  identity: AgentIdentity;
  storedAnchor: number | null;
}

export class Engine {
  readonly server: ServerFacts;
  private readonly probe: SetpfProbe;
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
  readonly rolloutTail: RolloutTail;

  constructor(private readonly opts: EngineOptions) {
    this.server = new ServerFacts(opts.runner);
    this.now = opts.now ?? Date.now;
    this.looks = new LookBook({ pendingMs: opts.fold.freshnessMs });
    this.liveness = new HookLiveness({ hookDecayMs: opts.fold.hookDecayMs });
    // Defaults for callers that pass none (tests, benches): the one place the engine names the process.
    const env = opts.env ?? process.env;
    const warn = opts.warn ?? ((line: string) => process.stderr.write(line));
    this.rolloutTail = new RolloutTail(() => codexRoot(env));
    this.probe = new SetpfProbe(opts.runner, this.server, warn);
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
    await runUnlessFailed(this.opts.runner, ['set-option', '-s', KEY.collectorAt, String(now)]);
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

  /**
   * Some pane's last look was a hold only the clock can end (a working→idle dwell, a hook claim
   * not yet decayed): a later look may publish a new state while nothing on the screen moves.
   */
  waitsOnClock(): boolean {
    return this.looks.anyPending();
  }

  /** A hook event for this pane reached the collector: its hooks are alive. */
  hookEvent(pane: string): void {
    this.liveness.hookEvent(pane, this.now());
  }

  /** The `-F` probe, cached per server in @tma_setpf_ok. A failed probe assumes guarded, uncached. */
  setpfSupported(pane: string): Promise<boolean> {
    return this.probe.supported(pane);
  }

  /** `recapture`: capture and fold this pane whatever its stamp's age (the broker's re-check). */
  async cycle(opts: { recapture?: string } = {}): Promise<CycleResult> {
    const now = this.now();
    const watching = this.watching;
    const listing = await this.readListing(now, watching);
    const { outcomes, writes, candidates } = await this.triageAll(listing, opts.recapture, now, watching);
    if (candidates.length) await this.look(candidates, writes, now, watching);
    const produced = await this.stamp(outcomes, writes, now, watching);
    if (!listing.stampede) await clearSeenAttention(this.opts.runner, outcomes);
    await runRolloutTail({
      tail: this.rolloutTail,
      manifests: this.opts.manifests,
      panes: outcomes,
      now,
      guarded: (pane) => this.setpfSupported(pane),
      run: (argv) => runUnlessFailed(this.opts.runner, argv),
      chain,
    });
    const rows = this.publish(outcomes, listing.info, now);
    this.lastCycleAt = now;
    const settled = watching && !this.looks.anyPending() && outcomes.every((o) => o.path === 'quiet' || o.path === 'ignored' || o.path === 'none');
    return { now, rows, panes: outcomes, stampede: listing.stampede, produced, settled };
  }

  /** Step 1: the panes, the last poll time, the heartbeat (and the server's facts on a first cycle). */
  private async readListing(now: number, watching: boolean): Promise<Listing> {
    const { runner, fold: cfg } = this.opts;
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
    return { records, painted, info, stampede, readAt, vouched, early, rootsKnown, roots };
  }

  /**
   * Step 2: every pane's triage (triage.ts), carried out: outcomes, the writes of panes settled
   * without a screen, and the panes to look at. The engine's memory (looks, hook liveness) is
   * consulted and updated here, pane by pane, so triage itself stays a function of data.
   */
  private async triageAll(l: Listing, recapture: string | undefined, now: number, watching: boolean) {
    // A watched engine leaves quiet panes alone, and walks only the process trees of the others.
    const quiet = new Set<string>();
    if (watching) {
      for (const r of l.records) if (!l.painted.has(r.paneId) && recapture !== r.paneId && this.looks.quiet(r, now)) quiet.add(r.paneId);
    }
    const lookRoots = watching ? l.records.filter((r) => !quiet.has(r.paneId)).map((r) => r.panePid) : l.roots;

    let procs: ProcEntry[] | null = null;
    const outcomes: PaneOutcome[] = [];
    const writes: PaneWrites[] = [];
    const candidates: Candidate[] = [];
    for (const rec of l.records) {
      const decoded = decodeStamp(rec.options);
      const prev = decoded.ok ? decoded.stamp : null;
      const outcome: PaneOutcome = { rec, stamp: prev, identity: null, path: 'consumer' };
      outcomes.push(outcome);
      const forced = recapture === rec.paneId;
      const repaint = isIgnored(rec.options['@agent_ignore']) ? false : this.recall(rec, prev, { forced, painted: l.painted, quiet, now, watching });
      const input: TriageInput = {
        rec,
        prev,
        forced,
        repaint,
        quiet: quiet.has(rec.paneId),
        readAt: l.readAt,
        vouched: l.vouched,
        stampede: l.stampede,
        procs,
        manifests: this.opts.manifests,
        fold: this.opts.fold,
        watching,
        now,
      };
      let t = triage(input);
      if (t.kind === 'walk') {
        procs = (l.rootsKnown && (await l.early)) || (await this.opts.readProcs(lookRoots));
        t = triage({ ...input, procs });
      }
      if (t.kind === 'keep') outcome.path = t.path;
      else if (t.kind === 'settle') {
        outcome.path = t.path;
        outcome.stamp = t.stamp;
        outcome.identity = t.identity;
        if (t.look) this.looks.looked(rec.paneId, now, false, t.look.sweepMs);
        if (t.cmds) writes.push({ outcome, cmds: t.cmds });
      } else if (t.kind === 'capture') {
        outcome.identity = t.identity;
        candidates.push({ outcome, prev, decodedOk: decoded.ok, identity: t.identity, storedAnchor: t.storedAnchor });
      }
    }
    return { outcomes, writes, candidates };
  }

  /**
   * What the engine remembers of a pane that is not ignored: whether it painted and that edge
   * needs a look. An edge a live hook claim answers is no reason to look: the pane is judged as
   * if unpainted, and may be quiet after all (added to `quiet` then).
   */
  private recall(
    rec: PaneRecord,
    prev: StampedState | null,
    c: { forced: boolean; painted: ReadonlySet<string>; quiet: Set<string>; now: number; watching: boolean },
  ): boolean {
    if (c.watching) this.liveness.observe(rec.paneId, prev);
    const repaint = c.painted.has(rec.paneId);
    if (repaint && c.watching && !c.forced && !this.edgeNeedsLook(rec, prev, c.now)) {
      if (this.looks.quiet(rec, c.now)) c.quiet.add(rec.paneId);
      return false;
    }
    return repaint;
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

  /** Step 3: capture every candidate in one chain and fold each screen into its writes. */
  private async look(candidates: Candidate[], writes: PaneWrites[], now: number, watching: boolean): Promise<void> {
    const guarded = await this.setpfSupported(candidates[0]!.outcome.rec.paneId);
    const shots = await captureScreens(
      this.opts.runner,
      candidates.map((c) => c.outcome.rec.paneId),
    );
    candidates.forEach((c, i) => {
      const shot = shots[i];
      const { outcome } = c;
      if (shot === null || shot === undefined) {
        outcome.stamp = null;
        outcome.path = 'dead';
        return;
      }
      const pane = outcome.rec.paneId;
      const prior = this.liveness.prior(pane, this.stills.prior(pane, c.prev, now, watching));
      const f = foldPane({ ...c, rec: outcome.rec, shot, prior, guarded, watching, seenPrompt: this.prompts.get(pane) ?? null, fold: this.opts.fold, now });
      this.notePrompt(pane, f.look, now);
      this.looks.looked(pane, now, waitsOnClock(f.verdict));
      outcome.path = 'captured';
      outcome.stamp = f.stamp;
      this.stills.looked(pane, f.verdict, f.stamp, watching, now);
      this.liveness.wrote(pane, f.stamp);
      outcome.rec = f.rec;
      writes.push({ outcome, cmds: f.cmds });
    });
  }

  /**
   * Step 4: every pane's writes in one chain, with the rollups, the poll marker and the heartbeat
   * riding along; they are worked out as if every write lands, and again after a failed chain
   * has been retried pane by pane. Then the memory of gone panes is dropped. Whether this cycle
   * produced anything (wrote a verdict).
   */
  private async stamp(outcomes: PaneOutcome[], writes: PaneWrites[], now: number, watching: boolean): Promise<boolean> {
    const producing = () => writes.some((w) => w.outcome.path !== 'dead' && w.outcome.path !== 'ignored');
    const closingWrites = (): TmuxCommand[] => {
      const cmds = rollupDrift(outcomes);
      if (producing()) cmds.push(['set-option', '-s', KEY.lastPoll, String(now)]);
      if (watching) cmds.push(['set-option', '-s', KEY.collectorAt, String(now)]);
      return cmds;
    };
    const withCmds = writes.filter((w) => w.cmds.length);
    const landed = await runTogetherOrEach(
      this.opts.runner,
      withCmds.map((w) => w.cmds),
      closingWrites(),
    );
    landed.groups.forEach((ok, i) => {
      if (ok) return;
      withCmds[i]!.outcome.stamp = null;
      withCmds[i]!.outcome.path = 'dead';
    });
    const closing = landed.together ? [] : closingWrites();
    const produced = producing();
    const live = new Set(outcomes.filter((o) => o.path !== 'dead').map((o) => o.rec.paneId));
    this.looks.keepOnly(live);
    this.stills.keepOnly(live);
    this.liveness.keepOnly(live);
    for (const p of this.prompts.keys()) if (!live.has(p)) this.prompts.delete(p);
    // A pane that died since the listing fails the chain from its command on; the rest still count.
    const runner = this.opts.runner;
    if (closing.length && !(await runUnlessFailed(runner, chain(closing)))) for (const cmd of closing) await runUnlessFailed(runner, cmd);
    return produced;
  }

  /** Last step: the rows of the stamped panes, and the transitions they make. */
  private publish(outcomes: PaneOutcome[], info: ServerInfo, now: number): AgentRow[] {
    const rows: AgentRow[] = [];
    for (const o of outcomes) {
      if (!o.stamp) continue;
      const agent = o.identity?.kind === 'agent' ? o.identity.manifest.name : (o.rec.options['@agent_name'] ?? '');
      rows.push(rowOf(o.rec, o.stamp, agent, { server: info.socketPath, host: this.opts.host, now }));
    }
    rows.sort(compareLocalRows);
    this.transitions.observe(outcomes.map((o) => ({ pane: o.rec.paneId, stamp: o.stamp })));
    return rows;
  }
}
