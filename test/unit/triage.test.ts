// The cycle's per-pane triage, from data alone: a pane record, its stamp, what the engine
// remembers, the process table and the clock go in; the decision comes out. No tmux.

import { describe, expect, it } from 'vitest';
import type { ProcEntry } from '../../collector/core/proc.js';
import { DEFAULT_FOLD, type StampedState } from '../../collector/core/types.js';
import { NOT_AGENT_SWEEP_MS } from '../../collector/engine/look-book.js';
import type { PaneRecord } from '../../collector/engine/pane-list.js';
import { triage, type TriageInput } from '../../collector/engine/triage.js';
import { loadAgentManifests } from '../../collector/manifest-files.js';

const NOW = 1_790_000_100_000;
const manifests = loadAgentManifests({ env: {} }).manifests;

const rec = (over: Partial<PaneRecord> = {}, options: PaneRecord['options'] = {}): PaneRecord => ({
  paneId: '%1',
  panePid: 100,
  sessionName: 'main',
  windowIndex: 0,
  paneIndex: 0,
  currentCommand: 'claude',
  windowActivity: 0,
  alternateOn: false,
  scrollPosition: null,
  height: 24,
  currentPath: '/src',
  options,
  windowSummary: '',
  sessionSummary: '',
  title: '✳ Tidy up',
  ...over,
});

const stamp = (over: Partial<StampedState> = {}): StampedState => ({
  state: 'idle',
  detail: null,
  source: 'capture',
  evidenceAt: NOW - 10_000,
  since: NOW - 10_000,
  stampedAt: NOW - 500,
  attention: false,
  notifiedAt: null,
  turnAt: 0,
  hash: 7n,
  pid: 200,
  session: null,
  subagents: [],
  ...over,
});

const shell: ProcEntry = { pid: 100, ppid: 1, pgid: 100, tpgid: 100, comm: 'bash' };
const withClaude: ProcEntry[] = [
  { ...shell, tpgid: 200 },
  { pid: 200, ppid: 100, pgid: 200, tpgid: 200, comm: 'claude' },
];

const input = (over: Partial<TriageInput> = {}): TriageInput => ({
  rec: rec(),
  prev: null,
  forced: false,
  repaint: false,
  quiet: false,
  readAt: NOW,
  vouched: false,
  stampede: false,
  procs: null,
  manifests,
  fold: DEFAULT_FOLD,
  watching: false,
  now: NOW,
  ...over,
});

/** Every option key a removal unsets. */
const unsets = (cmds: string[][] | null) => (cmds ?? []).filter((c) => c[0] === 'set-option' && c.includes('-u')).map((c) => c.at(-1));

describe('triage before any process is read', () => {
  it('an ignored pane loses its stamp, whatever its memory says, and costs a write only when stamped', () => {
    const ignored = rec({}, { '@agent_ignore': '1' });
    const t = triage(input({ rec: ignored, prev: stamp(), quiet: true, forced: true }));
    expect(t).toMatchObject({ kind: 'settle', path: 'ignored', stamp: null, identity: null, look: null });
    expect(unsets(t.kind === 'settle' ? t.cmds : null)).toContain('@agent_state');
    expect(triage(input({ rec: ignored }))).toMatchObject({ kind: 'settle', path: 'ignored', cmds: null });
  });

  it('a quiet pane is kept as it is, even with a stale stamp', () => {
    expect(triage(input({ quiet: true, prev: stamp({ stampedAt: NOW - 60_000 }) }))).toEqual({ kind: 'keep', path: 'quiet' });
  });

  it('a fresh stamp stands; a stale, future or missing one asks for the process table', () => {
    expect(triage(input({ prev: stamp() }))).toEqual({ kind: 'keep', path: 'consumer' });
    expect(triage(input({ prev: stamp({ stampedAt: NOW - DEFAULT_FOLD.freshnessMs }) }))).toEqual({ kind: 'walk' });
    expect(triage(input({ prev: stamp({ stampedAt: NOW + 1 }) }))).toEqual({ kind: 'walk' });
    expect(triage(input({ prev: null }))).toEqual({ kind: 'walk' });
  });

  it('a stale stamp stands while a heartbeat vouches for it, or another reader polled this second', () => {
    const stale = stamp({ stampedAt: NOW - 60_000 });
    expect(triage(input({ prev: stale, vouched: true }))).toEqual({ kind: 'keep', path: 'consumer' });
    expect(triage(input({ prev: stale, stampede: true }))).toEqual({ kind: 'keep', path: 'consumer' });
    // A stampede leaves only stamped panes to the other reader.
    expect(triage(input({ prev: null, stampede: true }))).toEqual({ kind: 'walk' });
  });

  it('a forced or repainted pane is looked at even under a fresh stamp', () => {
    expect(triage(input({ prev: stamp(), forced: true }))).toEqual({ kind: 'walk' });
    expect(triage(input({ prev: stamp(), repaint: true }))).toEqual({ kind: 'walk' });
  });

  it('a stamp is judged at the moment tmux answered, not when the cycle began', () => {
    const prev = stamp({ stampedAt: NOW + 100 });
    expect(triage(input({ prev, readAt: NOW + 100 }))).toEqual({ kind: 'keep', path: 'consumer' });
  });
});

describe('triage with the process table', () => {
  it('an agent in the foreground is captured, with the stored title anchor passed on', () => {
    const t = triage(input({ rec: rec({}, { '@tma_title_match_pid': '200' }), procs: withClaude }));
    expect(t).toMatchObject({ kind: 'capture', identity: { kind: 'agent', pid: 200, manifest: { name: 'claude' } }, storedAnchor: 200 });
  });

  it('a settled, quiet stamp is reused without a capture, unless forced or repainted', () => {
    const prev = stamp({ stampedAt: NOW - 5000 });
    const quietRec = rec({ windowActivity: Math.floor((NOW - 5000) / 1000) - 1 });
    const t = triage(input({ rec: quietRec, prev, procs: withClaude }));
    expect(t).toMatchObject({ kind: 'settle', path: 'reused', stamp: prev, cmds: null, look: {} });
    expect(triage(input({ rec: quietRec, prev, procs: withClaude, forced: true })).kind).toBe('capture');
    expect(triage(input({ rec: quietRec, prev, procs: withClaude, repaint: true })).kind).toBe('capture');
  });

  it('a pane that is no agent: its stamp is removed, or it is only swept rarely', () => {
    const bare = rec({ currentCommand: 'bash', title: 'bash' });
    const removed = triage(input({ rec: bare, prev: stamp({ stampedAt: NOW - 60_000 }), procs: [shell] }));
    expect(removed).toMatchObject({ kind: 'settle', path: 'removed', stamp: null, identity: { kind: 'none' }, look: {} });
    expect(unsets(removed.kind === 'settle' ? removed.cmds : null)).toContain('@agent_state');
    expect(triage(input({ rec: bare, procs: [shell] }))).toEqual({
      kind: 'settle',
      path: 'none',
      stamp: null,
      identity: { kind: 'none' },
      cmds: null,
      look: { sweepMs: NOT_AGENT_SWEEP_MS },
    });
    const anchored = triage(input({ rec: rec({ currentCommand: 'bash', title: 'bash' }, { '@tma_title_match_pid': '200' }), procs: [shell] }));
    expect(anchored).toMatchObject({ kind: 'settle', path: 'none', cmds: [['set-option', '-p', '-u', '-t', '%1', '@tma_title_match_pid']] });
  });

  it('a registered agent nothing can walk is held, marked when only shells remain, and reaped after the grace', () => {
    const reg = { '@agent_name': 'claude', '@agent_session': 's-1' };
    const prev = stamp({ stampedAt: NOW - 60_000, session: 's-1' });
    const onShell = (marker?: number) =>
      triage(
        input({ rec: rec({ currentCommand: 'bash' }, marker === undefined ? reg : { ...reg, '@tma_reg_dead_since': String(marker) }), prev, procs: [shell] }),
      );
    expect(onShell()).toMatchObject({
      kind: 'settle',
      path: 'registered',
      stamp: prev,
      identity: { kind: 'agent', pid: 0 },
      cmds: [['set-option', '-p', '-t', '%1', '@tma_reg_dead_since', String(NOW)]],
    });
    expect(onShell(NOW - 1000)).toMatchObject({ kind: 'settle', path: 'registered', stamp: prev, cmds: null });
    const reaped = onShell(NOW - 30_000);
    expect(reaped).toMatchObject({ kind: 'settle', path: 'removed', stamp: null });
    expect(unsets(reaped.kind === 'settle' ? reaped.cmds : null)).toContain('@agent_state');
    // Behind ssh something still runs: the marker goes.
    const ssh: ProcEntry[] = [
      { ...shell, tpgid: 300 },
      { pid: 300, ppid: 100, pgid: 300, tpgid: 300, comm: 'ssh' },
    ];
    const behind = triage(input({ rec: rec({ currentCommand: 'ssh' }, { ...reg, '@tma_reg_dead_since': String(NOW - 1000) }), prev, procs: ssh }));
    expect(behind).toMatchObject({
      kind: 'settle',
      path: 'registered',
      identity: { behind: 'remote' },
      cmds: [['set-option', '-p', '-u', '-t', '%1', '@tma_reg_dead_since']],
    });
  });
});
