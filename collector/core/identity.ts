// Which agent, if any, owns a pane: decided from the pane's own process tree, its title, and the
// registration a lifecycle hook left behind. Also the two small write decisions that ride on the
// answer: the title anchor option and the dead-registration reaper's marker.

import { stripAnsi } from './ansi.js';
import { isShellOnly, normalizeComm, subtree, type ProcEntry } from './proc.js';
import type { AgentManifest } from './types.js';

/** Foreground commands that run the agent somewhere we cannot walk (another host, a container). */
export const REMOTE_COMMANDS: readonly string[] = ['ssh', 'mosh', 'mosh-client', 'docker', 'podman', 'kubectl'];
/** Foreground commands that host further panes of their own: their inner screens are not ours. */
export const MULTIPLEXER_COMMANDS: readonly string[] = ['tmux', 'zellij', 'screen', 'dvtm', 'abduco'];

/** The dead-registration grace: a shell-only registered pane survives this long, then is removed. */
export const REAPER_GRACE_MS = 30_000;

export interface Registration {
  /** @agent_name */
  name: string;
  /** @agent_session */
  session: string;
}

export interface IdentityInput {
  paneCurrentCommand: string;
  /** Raw pane title; escapes are stripped here before the title patterns see it. */
  title: string;
  panePid: number;
  /** The whole process table; the pane's subtree is cut from it here. */
  procs: readonly ProcEntry[];
  /** Load order is precedence order. */
  manifests: readonly AgentManifest[];
  /** @tma_title_match_pid as stored on the pane. */
  storedAnchorPid: number | null;
  /**
   * @agent_name of the stored stamp. The anchor option holds only a pid, so without this a
   * title-gated agent whose title flickered (cursor runs as `node`) would be re-claimed by the
   * first other `node` manifest; the anchor only vouches for the agent that earned it.
   */
  storedAgentName?: string | null;
  /** Only present when @agent_name and @agent_session are both non-empty on a decodable stamp. */
  registration: Registration | null;
}

export type OutOfScope = 'remote' | 'multiplexer';

export type Identity =
  | {
      kind: 'agent';
      manifest: AgentManifest;
      /** 0 when the agent is known only from its registration. */
      pid: number;
      foregroundIsAgent: boolean;
      source: 'observed' | 'registered';
      /** The pid that earned a title-narrowed match; null when no title gate applied. */
      anchor: number | null;
      behind?: OutOfScope;
    }
  | { kind: 'remote'; command: string }
  | { kind: 'multiplexer'; command: string }
  | { kind: 'none' };

/**
 * The agent's main process among candidates: a process-group leader if there is one (a wrapper
 * that spawned the real binary shares its group), else the oldest-looking (lowest) pid.
 * A candidate with no controlling terminal is a daemon the agent detached (Codex 0.171 starts
 * `codex app-server` with setsid, a group leader of its own); it draws nothing on the pane, so
 * it counts only when no candidate has a terminal (or ps reports none for any of them).
 */
export function leaderPid(candidates: readonly ProcEntry[]): number | null {
  const onTerminal = candidates.filter((p) => p.tpgid !== null);
  const pool = onTerminal.length > 0 ? onTerminal : candidates;
  let leader: number | null = null;
  let bestIsLeader = false;
  for (const p of pool) {
    const isLeader = p.pid === p.pgid;
    if (leader === null || (isLeader && !bestIsLeader) || (isLeader === bestIsLeader && p.pid < leader)) {
      leader = p.pid;
      bestIsLeader = isLeader;
    }
  }
  return leader;
}

function titleMatches(patterns: readonly RegExp[], title: string): boolean {
  return patterns.some((re) => {
    // Patterns are shared across calls; a g/y flag would otherwise carry state between panes.
    re.lastIndex = 0;
    return re.test(title);
  });
}

/**
 * Whether the agent owns the terminal: its process group is the tty's foreground group (tpgid).
 * That holds however it was started: under `bash -c 'claude; exec bash'` or a launcher script
 * that does not exec, the group's leader (whose name tmux reports as pane_current_command) is the
 * shell, but the agent runs in that group and reads the keys. Where no tpgid is known (a ps
 * without one, the pane's processes gone), the name tmux reports is all there is to go on.
 */
function isForeground(fg: string, processNames: readonly string[], procs: readonly ProcEntry[], panePid: number, agentPid: number): boolean {
  const agent = procs.find((p) => p.pid === agentPid);
  const root = procs.find((p) => p.pid === panePid);
  // Every process on a terminal reports the same tpgid; the pane's root is on it for sure.
  const tpgid = root?.tpgid ?? agent?.tpgid ?? null;
  if (agent && tpgid !== null) return agent.pgid === tpgid;
  return processNames.includes(fg);
}

function registeredManifest(manifests: readonly AgentManifest[], registration: Registration | null): AgentManifest | undefined {
  if (registration === null) return undefined;
  return manifests.find((m) => m.name === registration.name);
}

export function identify(input: IdentityInput): Identity {
  const { manifests, registration, procs, panePid } = input;
  const fg = normalizeComm(input.paneCurrentCommand);

  const outOfScope: OutOfScope | null = REMOTE_COMMANDS.includes(fg) ? 'remote' : MULTIPLEXER_COMMANDS.includes(fg) ? 'multiplexer' : null;
  if (outOfScope !== null) {
    const registered = registeredManifest(manifests, registration);
    if (registered) {
      return {
        kind: 'agent',
        manifest: registered,
        pid: 0,
        foregroundIsAgent: false,
        source: 'registered',
        anchor: null,
        behind: outOfScope,
      };
    }
    return { kind: outOfScope, command: fg };
  }

  const tree = subtree(procs, panePid);
  const names = tree.map((p) => normalizeComm(p.comm));
  let title: string | null = null;

  for (const manifest of manifests) {
    const processNames = manifest.identity.processNames;
    const pid = leaderPid(tree.filter((_, i) => processNames.includes(names[i] as string)));
    if (pid === null) continue;

    const registeredHere = registration !== null && registration.name === manifest.name;
    let anchor: number | null = null;
    const patterns = manifest.identity.titlePatterns;
    if (patterns.length > 0) {
      title ??= stripAnsi(input.title);
      const anchoredHere = input.storedAnchorPid === pid && (input.storedAgentName == null || input.storedAgentName === manifest.name);
      if (titleMatches(patterns, title) || anchoredHere) anchor = pid;
      else if (!registeredHere) continue;
    }

    return {
      kind: 'agent',
      manifest,
      pid,
      foregroundIsAgent: isForeground(fg, processNames, procs, panePid, pid),
      source: registeredHere ? 'registered' : 'observed',
      anchor,
    };
  }

  const registered = registeredManifest(manifests, registration);
  if (registered) {
    return { kind: 'agent', manifest: registered, pid: 0, foregroundIsAgent: false, source: 'registered', anchor: null };
  }
  return { kind: 'none' };
}

export type AnchorUpdate = { kind: 'set'; pid: number } | { kind: 'unset' } | { kind: 'none' };

/**
 * What @tma_title_match_pid should become. The option mirrors the identity's anchor, so it is
 * cleared as soon as a pane stops being a title-narrowed agent; writes happen only on change.
 */
export function anchorUpdate(identity: Identity, storedAnchor: number | null): AnchorUpdate {
  const wanted = identity.kind === 'agent' ? identity.anchor : null;
  if (wanted === storedAnchor) return { kind: 'none' };
  return wanted === null ? { kind: 'unset' } : { kind: 'set', pid: wanted };
}

export type ReaperDecision = 'unset-marker' | 'set-marker' | 'remove' | 'hold' | 'none';

export interface ReaperInput {
  /** The pane's subtree (see `subtree`). */
  procs: readonly ProcEntry[];
  /** @tma_reg_dead_since, epoch ms. */
  marker: number | null;
  now: number;
}

/**
 * For a registered pane with no walkable agent: once only shells remain, start a clock; if they
 * are still alone after the grace period, the registration is dead. A marker from the future
 * (a clock step) would hold the pane forever, so it is treated as absent and restarted.
 */
export function reaperDecision({ procs, marker, now }: ReaperInput): ReaperDecision {
  if (!isShellOnly(procs)) return marker === null ? 'none' : 'unset-marker';
  if (marker === null || marker > now) return 'set-marker';
  return now - marker >= REAPER_GRACE_MS ? 'remove' : 'hold';
}

/** `@agent_ignore` is the user's opt-out: any non-empty value means hands off. */
export function isIgnored(agentIgnore: string | null | undefined): boolean {
  return agentIgnore !== null && agentIgnore !== undefined && agentIgnore !== '';
}
