// Shared shapes of the pure detection core. No I/O and no clock live in collector/core:
// every time value arrives as an argument, every file arrives as text.

import type { Source, State } from '../../shared/tokens.js';

export type { Source, State };

// ---------------------------------------------------------------------------------------------
// Manifests (compiled form; the TOML schema lives in manifest-schema.ts)

export type Region = { kind: 'tail_lines'; n: number } | { kind: 'visible' } | { kind: 'title' };

export type Matcher =
  | { kind: 'contains'; text: string }
  | { kind: 'regex'; source: string; re: RegExp }
  | { kind: 'line_regex'; source: string; re: RegExp }
  | { kind: 'any'; of: Matcher[] }
  | { kind: 'all'; of: Matcher[] }
  | { kind: 'not'; of: Matcher };

export interface Rule {
  /** Position in the manifest (rN in the spec). */
  index: number;
  state: State;
  detail: string | null;
  priority: number;
  region: Region;
  match: Matcher;
  skipStateUpdate: boolean;
}

export type Claim = { kind: 'state'; state: State; detail: string | null } | { kind: 'lifecycle'; phase: 'start' | 'end' };

export interface HookMapEntry {
  event: string;
  /** Raw regex source; compiled per event, a bad one never matches. */
  matcher: string | null;
  claim: Claim;
  turnEnd: boolean;
}

export interface AgentManifest {
  name: string;
  /** Where it was loaded from, for error messages and doctor. */
  path: string;
  bundled: boolean;
  minEngineVersion: string;
  identity: { processNames: string[]; titlePatterns: RegExp[] };
  /** null = the agent has no hook integration. */
  hooks: { covers: string[]; map: HookMapEntry[] } | null;
  capture: { visible: State[] };
  rules: Rule[];
  /** canonical detail token -> aliases */
  details: Record<string, string[]>;
  telemetry: { context: { channel: 'event' | 'file-tail' | 'screen'; format: string } | null };
  /** How to read a blocked screen's one-line summary; null = the manifest does not say. */
  prompt?: { region: Region; summary: RegExp } | null;
}

/** A manifest file handed to the pure loader (the caller did the reading). */
export interface ManifestFile {
  path: string;
  text: string;
}

export interface ManifestIssue {
  file: string;
  problem: string;
}

export interface ManifestSet {
  manifests: AgentManifest[];
  issues: ManifestIssue[];
}

// ---------------------------------------------------------------------------------------------
// Evidence and the rule engine

export interface Snapshot {
  title: string;
  /** Raw capture, ANSI escapes kept, lines joined by "\n". */
  tail: string;
  visibleHeight: number | null;
  scrollPosition: number | null;
  capturedAt: number;
}

export type Provenance = 'hook_event' | 'title' | 'screen_rule';

export interface Evidence {
  provenance: Provenance;
  claim: Claim;
  at: number;
  /** Human-readable origin, e.g. `claude r0` or `hook Stop`. */
  label: string;
}

export interface RuleMatch {
  index: number;
  state: State;
  matched: boolean;
  skipStateUpdate: boolean;
}

export interface Evaluation {
  /** At most one claim per state, ordered by state token. */
  evidence: Evidence[];
  matches: RuleMatch[];
  historyView: boolean;
}

// ---------------------------------------------------------------------------------------------
// The stamped tuple read back from pane options

export interface StampedState {
  state: State;
  detail: string | null;
  source: Source;
  evidenceAt: number;
  since: number;
  stampedAt: number;
  attention: boolean;
  notifiedAt: number | null;
  turnAt: number;
  /** fnv1a64 of the last capture, decimal u64. */
  hash: bigint | null;
  pid: number;
  session: string | null;
  subagents: string[];
}

// ---------------------------------------------------------------------------------------------
// The fold

export interface Facts {
  /** Agent pid, 0 when no process could be walked. */
  pid: number;
  foregroundIsAgent: boolean;
  /** scroll_position > 0 (copy mode at offset 0 is not scrolled). */
  scrolled: boolean;
  historyView: boolean;
}

export interface FoldConfig {
  dwellMs: number;
  hookDecayMs: number;
  blockedDecayMs: number;
  freshnessMs: number;
}

export const DEFAULT_FOLD: FoldConfig = {
  dwellMs: 3000,
  hookDecayMs: 60_000,
  blockedDecayMs: 300_000,
  freshnessMs: 3000,
};

export interface Winning {
  /** Source stamped into @agent_source. */
  source: Exclude<Source, 'activity'>;
  at: number;
  label: string;
}

export interface Verdict {
  state: State;
  detail: string | null;
  winning: Winning;
  action: 'publish' | 'hold';
  /** Publish may overwrite a stored hook claim (fresh hook, foreground cap, carve-out, decay). */
  mayOverride: boolean;
  setAttention: boolean;
  episodeReset: boolean;
  /** A publish that only refreshes a stored hook claim the screen agrees with. */
  corroborates: boolean;
  /** The prior stamp the fold reasoned against (null after an episode reset). */
  prev: StampedState | null;
  /** Why, for debugging and doctor. */
  reason: string;
  /**
   * A hold only the clock can end (a working→idle dwell, a hook claim not yet decayed): the same
   * screen looked at later may be published. Absent on every other verdict.
   */
  waitsOnClock?: true;
}

// ---------------------------------------------------------------------------------------------
// Stamp plans: what a verdict turns into, before it is rendered as tmux argv

export type Guard =
  | { kind: 'unconditional' }
  | { kind: 'protect_hook' }
  | { kind: 'carve_out'; captureAt: number }
  | { kind: 'refresh_claim'; state: State }
  /**
   * A hook event: it lands unless the pane already holds a hook event the agent sent after it
   * (`@agent_hook_at`). `sentAt` is the event's place in the agent's own order.
   */
  | { kind: 'hook_arbitrate'; sentAt: number }
  /**
   * A screen read over a stale hook claim whose hooks went silent (a demoted pane): it lands over
   * that claim, but not over a hook claim newer than it (one that arrived since it was read).
   */
  | { kind: 'overrule_claim'; claimAt: number };

export interface PublishPlan {
  kind: 'publish';
  state: State;
  detail: string | null;
  source: Exclude<Source, 'activity'>;
  evidenceAt: number;
  since: number;
  stampedAt: number;
  hash: bigint | null;
  pid: number;
  name: string;
  setAttention: boolean;
  episodeReset: boolean;
  guard: Guard;
}

export interface HoldPlan {
  kind: 'hold';
  stampedAt: number;
  hash: bigint | null;
}

export interface RemovePlan {
  kind: 'remove';
}

export type StampPlan = PublishPlan | HoldPlan | RemovePlan;
