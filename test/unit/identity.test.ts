import { describe, expect, it } from 'vitest';
import {
  REAPER_GRACE_MS,
  anchorUpdate,
  identify,
  isIgnored,
  leaderPid,
  reaperDecision,
  type Identity,
  type IdentityInput,
} from '../../collector/core/identity.js';
import type { ProcEntry } from '../../collector/core/proc.js';
import type { AgentManifest } from '../../collector/core/types.js';

function manifest(name: string, processNames: string[], titlePatterns: RegExp[] = []): AgentManifest {
  return {
    name,
    path: `<bundled>/${name}.toml`,
    bundled: true,
    minEngineVersion: '0.4',
    identity: { processNames, titlePatterns },
    hooks: null,
    capture: { visible: [] },
    rules: [],
    details: {},
    telemetry: { context: null },
  };
}

// The bundled order and the identity facts that matter here.
const claude = manifest('claude', ['claude']);
const codex = manifest('codex', ['codex', 'codex-aarch64-a']);
const gemini = manifest('gemini', ['node'], [/^◇ {2}Ready /u, /^✦ {2}Working…/u, /^✋ {2}Action Required /u]);
const cursor = manifest('cursor', ['node', 'agent'], [/^Cursor Agent$/u]);
const pi = manifest('pi', ['node', 'pi'], [/^π /u]);
const MANIFESTS = [claude, codex, gemini, cursor, pi];

function proc(pid: number, ppid: number, comm: string, pgid = pid, tpgid: number | null = null): ProcEntry {
  return { pid, ppid, pgid, tpgid, comm };
}

const PANE = 100;
/** A shell at the pane root running `node` as its foreground job. */
function nodePane(): ProcEntry[] {
  return [proc(1, 0, 'init'), proc(PANE, 1, '-zsh', PANE, 500), proc(500, PANE, 'node', 500, 500)];
}

function input(over: Partial<IdentityInput>): IdentityInput {
  return {
    paneCurrentCommand: 'node',
    title: '',
    panePid: PANE,
    procs: nodePane(),
    manifests: MANIFESTS,
    storedAnchorPid: null,
    registration: null,
    ...over,
  };
}

function agentOf(id: Identity) {
  if (id.kind !== 'agent') throw new Error(`expected an agent, got ${id.kind}`);
  return id;
}

describe('leaderPid', () => {
  it('prefers a process-group leader over a lower pid', () => {
    expect(leaderPid([proc(10, 1, 'x', 5), proc(20, 1, 'x', 20), proc(30, 1, 'x', 30)])).toBe(20);
  });
  it('falls back to the lowest pid when nobody leads a group', () => {
    expect(leaderPid([proc(30, 1, 'x', 1), proc(10, 1, 'x', 1), proc(20, 1, 'x', 1)])).toBe(10);
  });
  it('is null without candidates', () => {
    expect(leaderPid([])).toBeNull();
  });
  it('passes over a detached leader (no controlling terminal) for one on the terminal', () => {
    expect(leaderPid([proc(20, 10, 'codex', 5, 5), proc(30, 20, 'codex', 30, null)])).toBe(20);
  });
});

describe('identify: Codex with its detached app-server daemon', () => {
  // As ps showed it on Codex 0.171.0: bash -> node (codex.js) -> codex, all in the terminal's
  // foreground group, and `codex app-server --managed-daemon`, setsid, with no terminal.
  const procs = [
    proc(1, 0, 'init'),
    proc(PANE, 1, 'bash', PANE, PANE),
    proc(200, PANE, 'node', PANE, PANE),
    proc(300, 200, 'codex', PANE, PANE),
    proc(400, 300, 'codex', 400, null),
  ];
  it('names the interactive codex, which owns the foreground', () => {
    const id = agentOf(identify(input({ paneCurrentCommand: 'bash', procs })));
    expect(id.manifest.name).toBe('codex');
    expect(id.pid).toBe(300);
    expect(id.foregroundIsAgent).toBe(true);
  });
});

describe('identify: observed agents', () => {
  it('claims a claude pane by process name, preferring the group leader', () => {
    const procs = [proc(PANE, 1, 'zsh', PANE, 600), proc(400, PANE, 'claude', 600), proc(600, PANE, '.claude-wrapped', 600)];
    const id = agentOf(identify(input({ paneCurrentCommand: 'claude', procs })));
    expect(id.manifest.name).toBe('claude');
    expect(id.pid).toBe(600);
    expect(id.source).toBe('observed');
    expect(id.anchor).toBeNull();
    expect(id.foregroundIsAgent).toBe(true);
  });

  it('claims a node pane with a gemini title as gemini, anchored on the node pid', () => {
    const id = agentOf(identify(input({ title: '◇  Ready (~/src/app)' })));
    expect(id.manifest.name).toBe('gemini');
    expect(id.pid).toBe(500);
    expect(id.anchor).toBe(500);
  });

  it('matches the title after stripping escapes', () => {
    const id = agentOf(identify(input({ title: '\u001b[1m✦  Working… (x)\u001b[0m' })));
    expect(id.manifest.name).toBe('gemini');
  });

  it('claims a node pane titled `π - x` as pi', () => {
    const id = agentOf(identify(input({ title: 'π - x' })));
    expect(id.manifest.name).toBe('pi');
    expect(id.anchor).toBe(500);
  });

  it('does not claim a bare node pane', () => {
    expect(identify(input({ title: 'zsh ~/src' }))).toEqual({ kind: 'none' });
  });

  it('keeps a cursor claim through title flicker while the anchor names the same pid', () => {
    const procs = [proc(PANE, 1, 'zsh', PANE, 700), proc(700, PANE, 'agent', 700)];
    const first = agentOf(identify(input({ paneCurrentCommand: 'agent', title: 'Cursor Agent', procs })));
    expect(first.manifest.name).toBe('cursor');
    expect(first.pid).toBe(700);
    expect(anchorUpdate(first, null)).toEqual({ kind: 'set', pid: 700 });

    const flickered = { paneCurrentCommand: 'agent', title: 'Read file.ts', procs };
    expect(identify(input(flickered))).toEqual({ kind: 'none' });
    const held = agentOf(identify(input({ ...flickered, storedAnchorPid: 700 })));
    expect(held.manifest.name).toBe('cursor');
    expect(held.anchor).toBe(700);
    expect(anchorUpdate(held, 700)).toEqual({ kind: 'none' });
  });

  it('without a stored name, the anchor goes to the first title-gated manifest', () => {
    // The anchor option stores only a pid; with nothing else to go on, gemini (earlier) takes it.
    const id = agentOf(identify(input({ title: 'Read file.ts', storedAnchorPid: 500 })));
    expect(id.manifest.name).toBe('gemini');
  });

  it('a cursor running as node keeps its claim through title flicker (the stored name binds the anchor)', () => {
    const id = agentOf(identify(input({ title: 'Read file.ts', storedAnchorPid: 500, storedAgentName: 'cursor' })));
    expect(id.manifest.name).toBe('cursor');
    expect(id.anchor).toBe(500);
  });

  it('re-requires a title match once the agent pid is new', () => {
    const procs = [proc(PANE, 1, 'zsh', PANE, 501), proc(501, PANE, 'node', 501)];
    const id = identify(input({ title: 'Read file.ts', storedAnchorPid: 500, procs }));
    expect(id).toEqual({ kind: 'none' });
    expect(anchorUpdate(id, 500)).toEqual({ kind: 'unset' });
  });

  it('lets an earlier manifest with a process match win over a later one', () => {
    const procs = [proc(PANE, 1, 'zsh', PANE), proc(200, PANE, 'codex', 200), proc(300, PANE, 'claude', 300)];
    expect(agentOf(identify(input({ paneCurrentCommand: 'zsh', procs }))).manifest.name).toBe('claude');
  });

  it('only looks inside the pane subtree', () => {
    const procs = [proc(PANE, 1, 'zsh', PANE), proc(200, 1, 'claude', 200)];
    expect(identify(input({ paneCurrentCommand: 'zsh', procs }))).toEqual({ kind: 'none' });
  });
});

describe('identify: foreground test', () => {
  const claudeProcs = (rootTpgid: number | null) => [proc(PANE, 1, 'zsh', PANE, rootTpgid), proc(600, PANE, 'claude', 600)];

  it('is true when the pane command is the agent and the terminal foreground is its group', () => {
    expect(agentOf(identify(input({ paneCurrentCommand: 'claude', procs: claudeProcs(600) }))).foregroundIsAgent).toBe(true);
  });

  it('is vetoed when the agent is a background job (tpgid names another group)', () => {
    const id = agentOf(identify(input({ paneCurrentCommand: 'claude', procs: claudeProcs(PANE) })));
    expect(id.pid).toBe(600);
    expect(id.foregroundIsAgent).toBe(false);
  });

  it('stands on the name alone when tpgid is missing', () => {
    expect(agentOf(identify(input({ paneCurrentCommand: 'claude', procs: claudeProcs(null) }))).foregroundIsAgent).toBe(true);
  });

  it('stands on the name alone when the pane root is missing from the table', () => {
    const procs = [proc(600, PANE, 'claude', 600)];
    expect(agentOf(identify(input({ paneCurrentCommand: 'claude', procs }))).foregroundIsAgent).toBe(true);
  });

  it('is false when another job owns the terminal and tmux names it', () => {
    const procs = [...claudeProcs(700), proc(700, PANE, 'vim', 700, 700)];
    const id = agentOf(identify(input({ paneCurrentCommand: 'vim', procs })));
    expect(id.manifest.name).toBe('claude');
    expect(id.foregroundIsAgent).toBe(false);
  });

  it('without a tpgid, is false when the pane command is not one of the agent names', () => {
    const id = agentOf(identify(input({ paneCurrentCommand: 'vim', procs: claudeProcs(null) })));
    expect(id.manifest.name).toBe('claude');
    expect(id.foregroundIsAgent).toBe(false);
  });

  it('without a tpgid, compares the normalized pane command exactly and case-sensitively', () => {
    expect(agentOf(identify(input({ paneCurrentCommand: '.claude-wrapped', procs: claudeProcs(null) }))).foregroundIsAgent).toBe(true);
    expect(agentOf(identify(input({ paneCurrentCommand: 'Claude', procs: claudeProcs(null) }))).foregroundIsAgent).toBe(false);
  });

  // `bash -c 'claude; exec bash'` and a launcher script that does not exec: a non-interactive shell
  // keeps its child in its own process group, so the group's leader (the name tmux reports) is the
  // shell while the agent is the one reading the keys. Rows as ps showed them for the real agents.
  it('is true under a wrapper shell: the agent is in the foreground group tmux names "bash" for', () => {
    const procs = [proc(PANE, 1, 'bash', PANE, PANE), proc(601, PANE, 'claude', PANE, PANE)];
    const id = agentOf(identify(input({ paneCurrentCommand: 'bash', procs })));
    expect(id.manifest.name).toBe('claude');
    expect(id.pid).toBe(601);
    expect(id.foregroundIsAgent).toBe(true);
  });

  it('is true for node-hosted CLIs under a launcher script (sh -> node -> native binary)', () => {
    const codex = [proc(PANE, 1, 'sh', PANE, PANE), proc(610, PANE, 'node', PANE, PANE), proc(611, 610, 'codex', PANE, PANE)];
    const id = agentOf(identify(input({ paneCurrentCommand: 'sh', procs: codex })));
    expect(id.manifest.name).toBe('codex');
    expect(id.foregroundIsAgent).toBe(true);
    const gemini = [proc(PANE, 1, 'bash', PANE, PANE), proc(620, PANE, 'node', PANE, PANE), proc(621, 620, 'node', PANE, PANE)];
    const g = agentOf(identify(input({ paneCurrentCommand: 'bash', title: '◇  Ready (proj)', procs: gemini })));
    expect(g.manifest.name).toBe('gemini');
    expect(g.foregroundIsAgent).toBe(true);
  });

  it('is false under a wrapper once the agent is a stopped job behind an interactive shell', () => {
    // Ctrl-Z in an interactive shell: the agent keeps its own group, the shell takes the terminal.
    const procs = [proc(PANE, 1, 'bash', PANE, PANE), proc(630, PANE, 'claude', 630, PANE)];
    expect(agentOf(identify(input({ paneCurrentCommand: 'bash', procs }))).foregroundIsAgent).toBe(false);
  });
});

describe('identify: registration', () => {
  const registration = { name: 'gemini', session: 's-1' };

  it('bypasses the title gate for the registered agent, with no anchor', () => {
    const id = agentOf(identify(input({ title: 'zsh', registration })));
    expect(id.manifest.name).toBe('gemini');
    expect(id.pid).toBe(500);
    expect(id.source).toBe('registered');
    expect(id.anchor).toBeNull();
    expect(anchorUpdate(id, 500)).toEqual({ kind: 'unset' });
  });

  it('loses to another manifest that observes its process', () => {
    const procs = [proc(PANE, 1, 'zsh', PANE), proc(300, PANE, 'claude', 300)];
    const id = agentOf(identify(input({ paneCurrentCommand: 'claude', procs, registration })));
    expect(id.manifest.name).toBe('claude');
    expect(id.source).toBe('observed');
  });

  it('holds a registered pane without a walkable process as pid 0', () => {
    const procs = [proc(PANE, 1, 'zsh', PANE)];
    const id = identify(input({ paneCurrentCommand: 'zsh', procs, registration }));
    expect(id).toEqual({
      kind: 'agent',
      manifest: gemini,
      pid: 0,
      foregroundIsAgent: false,
      source: 'registered',
      anchor: null,
    });
  });

  it('ignores a registration naming no loaded manifest', () => {
    const procs = [proc(PANE, 1, 'zsh', PANE)];
    const id = identify(input({ paneCurrentCommand: 'zsh', procs, registration: { name: 'gone', session: 's' } }));
    expect(id).toEqual({ kind: 'none' });
  });
});

describe('identify: out-of-scope panes', () => {
  it.each([
    ['ssh', 'remote'],
    ['mosh-client', 'remote'],
    ['/usr/bin/docker', 'remote'],
    ['kubectl', 'remote'],
    ['tmux', 'multiplexer'],
    ['zellij', 'multiplexer'],
    ['abduco', 'multiplexer'],
  ])('%s is %s even with an agent process underneath', (command, kind) => {
    const procs = [proc(PANE, 1, 'zsh', PANE), proc(300, PANE, 'claude', 300)];
    const base = command.slice(command.lastIndexOf('/') + 1);
    expect(identify(input({ paneCurrentCommand: command, procs }))).toEqual({ kind, command: base });
  });

  it('turns a registered pane behind ssh into a pid-0 agent', () => {
    const id = identify(input({ paneCurrentCommand: 'ssh', registration: { name: 'claude', session: 's' } }));
    expect(id).toEqual({
      kind: 'agent',
      manifest: claude,
      pid: 0,
      foregroundIsAgent: false,
      source: 'registered',
      anchor: null,
      behind: 'remote',
    });
  });

  it('marks a registered pane behind an inner multiplexer', () => {
    const id = agentOf(identify(input({ paneCurrentCommand: 'tmux', registration: { name: 'pi', session: 's' } })));
    expect(id.behind).toBe('multiplexer');
    expect(id.pid).toBe(0);
  });
});

describe('anchorUpdate', () => {
  const anchored = agentOf(identify(input({ title: 'π - x' })));

  it('sets a new anchor, and writes nothing when it is unchanged', () => {
    expect(anchorUpdate(anchored, null)).toEqual({ kind: 'set', pid: 500 });
    expect(anchorUpdate(anchored, 499)).toEqual({ kind: 'set', pid: 500 });
    expect(anchorUpdate(anchored, 500)).toEqual({ kind: 'none' });
  });

  it('clears a stored anchor when the pane stops being an agent', () => {
    expect(anchorUpdate({ kind: 'none' }, 500)).toEqual({ kind: 'unset' });
    expect(anchorUpdate({ kind: 'remote', command: 'ssh' }, 500)).toEqual({ kind: 'unset' });
    expect(anchorUpdate({ kind: 'none' }, null)).toEqual({ kind: 'none' });
  });
});

describe('reaperDecision', () => {
  const shells = [proc(PANE, 1, '-zsh')];
  const busy = [proc(PANE, 1, '-zsh'), proc(300, PANE, 'docker')];
  const now = 2_000_000_000_000;

  it('starts the clock when only shells remain', () => {
    expect(reaperDecision({ procs: shells, marker: null, now })).toBe('set-marker');
    expect(reaperDecision({ procs: [], marker: null, now })).toBe('set-marker');
  });

  it('holds just under the grace period and removes exactly at and past it', () => {
    expect(REAPER_GRACE_MS).toBe(30_000);
    expect(reaperDecision({ procs: shells, marker: now - 29_999, now })).toBe('hold');
    expect(reaperDecision({ procs: shells, marker: now - 30_000, now })).toBe('remove');
    expect(reaperDecision({ procs: shells, marker: now - 30_001, now })).toBe('remove');
    expect(reaperDecision({ procs: shells, marker: now, now })).toBe('hold');
  });

  it('restarts a marker from the future', () => {
    expect(reaperDecision({ procs: shells, marker: now + 1, now })).toBe('set-marker');
  });

  it('clears the marker once something other than a shell runs, and does nothing without one', () => {
    expect(reaperDecision({ procs: busy, marker: now - 60_000, now })).toBe('unset-marker');
    expect(reaperDecision({ procs: busy, marker: null, now })).toBe('none');
  });
});

describe('isIgnored', () => {
  it('is any non-empty value', () => {
    expect(isIgnored('1')).toBe(true);
    expect(isIgnored('no')).toBe(true);
    expect(isIgnored('')).toBe(false);
    expect(isIgnored(null)).toBe(false);
    expect(isIgnored(undefined)).toBe(false);
  });
});
