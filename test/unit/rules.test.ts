import { describe, expect, it } from 'vitest';
import { evaluate } from '../../collector/core/rules.js';
import type { AgentManifest, Matcher, Region, Rule, Snapshot, State } from '../../collector/core/types.js';

const AT = 1_784_594_552_000;

const contains = (text: string): Matcher => ({ kind: 'contains', text });
const re = (source: string, flags = 'u'): Matcher => ({ kind: 'regex', source, re: new RegExp(source, flags) });
const lineRe = (source: string): Matcher => ({ kind: 'line_regex', source, re: new RegExp(source, 'u') });

interface RuleSpec {
  state: State;
  match: Matcher;
  detail?: string | null;
  priority?: number;
  region?: Region;
  skip?: boolean;
}

function manifest(name: string, specs: RuleSpec[]): AgentManifest {
  const rules: Rule[] = specs.map((s, index) => ({
    index,
    state: s.state,
    detail: s.detail ?? null,
    priority: s.priority ?? 0,
    region: s.region ?? { kind: 'tail_lines', n: 40 },
    match: s.match,
    skipStateUpdate: s.skip ?? false,
  }));
  return {
    name,
    path: `/manifests/${name}.toml`,
    bundled: false,
    minEngineVersion: '0.1.0',
    identity: { processNames: [name], titlePatterns: [] },
    hooks: null,
    capture: { visible: ['idle', 'working', 'blocked'] },
    rules,
    details: {},
    telemetry: { context: null },
  };
}

function snap(tail: string, over: Partial<Snapshot> = {}): Snapshot {
  return { title: '', tail, visibleHeight: null, scrollPosition: null, capturedAt: AT, ...over };
}

describe('evaluate: claims', () => {
  it('emits nothing when no rule matches, and reports every rule as unmatched', () => {
    const m = manifest('demo', [
      { state: 'working', match: contains('esc to interrupt') },
      { state: 'idle', match: contains('? for shortcuts') },
    ]);
    const ev = evaluate(m, snap('just some text\n'));
    expect(ev.evidence).toEqual([]);
    expect(ev.historyView).toBe(false);
    expect(ev.matches).toEqual([
      { index: 0, state: 'working', matched: false, skipStateUpdate: false },
      { index: 1, state: 'idle', matched: false, skipStateUpdate: false },
    ]);
  });

  it('one claim per matched state with detail, capture time and a `name rN` label', () => {
    const m = manifest('claude', [
      { state: 'blocked', detail: 'permission', match: contains('Do you want') },
      { state: 'idle', match: contains('manual mode') },
    ]);
    const ev = evaluate(m, snap('Do you want to proceed?\n⏸ manual mode on\n'));
    expect(ev.evidence).toEqual([
      { provenance: 'screen_rule', claim: { kind: 'state', state: 'blocked', detail: 'permission' }, at: AT, label: 'claude r0' },
      { provenance: 'screen_rule', claim: { kind: 'state', state: 'idle', detail: null }, at: AT, label: 'claude r1' },
    ]);
  });

  it('orders evidence by state token, not by rule order', () => {
    const m = manifest('demo', [
      { state: 'working', match: contains('x') },
      { state: 'unknown', match: contains('x') },
      { state: 'idle', match: contains('x') },
      { state: 'blocked', match: contains('x') },
    ]);
    const ev = evaluate(m, snap('x'));
    expect(ev.evidence.map((e) => e.claim.kind === 'state' && e.claim.state)).toEqual(['blocked', 'idle', 'unknown', 'working']);
    expect(ev.evidence.map((e) => e.label)).toEqual(['demo r3', 'demo r2', 'demo r1', 'demo r0']);
  });

  it('uses the snapshot capture time as evidence time', () => {
    const m = manifest('demo', [{ state: 'idle', match: contains('x') }]);
    expect(evaluate(m, snap('x', { capturedAt: 42 })).evidence[0]?.at).toBe(42);
  });

  it('title-region rules have title provenance, screen rules screen_rule', () => {
    const m = manifest('claude', [
      { state: 'working', region: { kind: 'title' }, match: re('^[⠀-⣿] ') },
      { state: 'idle', region: { kind: 'visible' }, match: contains('manual mode') },
    ]);
    const ev = evaluate(m, snap('⏸ manual mode on', { title: '⠂ Run shell command echo test' }));
    expect(ev.evidence.map((e) => [e.label, e.provenance])).toEqual([
      ['claude r1', 'screen_rule'],
      ['claude r0', 'title'],
    ]);
  });

  it('a title rule sees the title only, and a screen rule never sees the title', () => {
    const m = manifest('demo', [
      { state: 'working', region: { kind: 'title' }, match: contains('busy') },
      { state: 'idle', match: contains('busy') },
    ]);
    const onTitle = evaluate(m, snap('calm', { title: 'busy' }));
    expect(onTitle.evidence.map((e) => e.label)).toEqual(['demo r0']);
    const onScreen = evaluate(m, snap('busy', { title: 'calm' }));
    expect(onScreen.evidence.map((e) => e.label)).toEqual(['demo r1']);
  });
});

describe('evaluate: priority and ties', () => {
  const twoIdle = (p0: number, p1: number) =>
    manifest('demo', [
      { state: 'idle', detail: 'first', priority: p0, match: contains('x') },
      { state: 'idle', detail: 'second', priority: p1, match: contains('x') },
    ]);

  it('the higher priority wins within a state, whichever comes first', () => {
    expect(evaluate(twoIdle(1, 2), snap('x')).evidence.map((e) => e.label)).toEqual(['demo r1']);
    expect(evaluate(twoIdle(2, 1), snap('x')).evidence.map((e) => e.label)).toEqual(['demo r0']);
  });

  it('equal priority keeps the earlier rule', () => {
    const ev = evaluate(twoIdle(5, 5), snap('x'));
    expect(ev.evidence).toHaveLength(1);
    expect(ev.evidence[0]?.label).toBe('demo r0');
    expect(ev.evidence[0]?.claim).toEqual({ kind: 'state', state: 'idle', detail: 'first' });
  });

  it('negative priorities compare the same way', () => {
    expect(evaluate(twoIdle(-2, -1), snap('x')).evidence[0]?.label).toBe('demo r1');
    expect(evaluate(twoIdle(-1, -1), snap('x')).evidence[0]?.label).toBe('demo r0');
  });

  it('a higher-priority rule that does not match does not win', () => {
    const m = manifest('demo', [
      { state: 'blocked', detail: 'question', priority: 0, match: contains('x') },
      { state: 'blocked', detail: 'permission', priority: 9, match: contains('nope') },
    ]);
    expect(evaluate(m, snap('x')).evidence.map((e) => e.label)).toEqual(['demo r0']);
  });

  it('priority only competes within one state', () => {
    const m = manifest('demo', [
      { state: 'idle', priority: 0, match: contains('x') },
      { state: 'working', priority: 100, match: contains('x') },
    ]);
    expect(evaluate(m, snap('x')).evidence.map((e) => e.label)).toEqual(['demo r0', 'demo r1']);
  });
});

describe('evaluate: skip_state_update', () => {
  const m = manifest('claude', [
    { state: 'idle', skip: true, match: contains('Showing detailed transcript') },
    { state: 'blocked', detail: 'permission', match: lineRe('^\\s*❯ 1\\. Yes') },
    { state: 'idle', match: contains('manual mode') },
  ]);

  it('a matched skip rule sets historyView and claims nothing, while other rules still claim', () => {
    const ev = evaluate(m, snap('Showing detailed transcript · ctrl+o to toggle\n  ❯ 1. Yes\n'));
    expect(ev.historyView).toBe(true);
    expect(ev.evidence.map((e) => e.label)).toEqual(['claude r1']);
    expect(ev.matches[0]).toEqual({ index: 0, state: 'idle', matched: true, skipStateUpdate: true });
  });

  it('the skip rule does not occupy its state slot: a later same-state rule still claims', () => {
    const ev = evaluate(m, snap('Showing detailed transcript\n⏸ manual mode on'));
    expect(ev.historyView).toBe(true);
    expect(ev.evidence.map((e) => e.label)).toEqual(['claude r2']);
  });

  it('an unmatched skip rule leaves historyView false', () => {
    const ev = evaluate(m, snap('⏸ manual mode on'));
    expect(ev.historyView).toBe(false);
    expect(ev.matches[0]?.matched).toBe(false);
  });
});

describe('evaluate: regions inside one call', () => {
  it('each rule reads its own region even when regions differ', () => {
    const tail = 'Do you want to proceed?\n' + 'line\n'.repeat(5) + 'prompt';
    const m = manifest('demo', [
      { state: 'blocked', region: { kind: 'tail_lines', n: 3 }, match: contains('Do you want') },
      { state: 'blocked', region: { kind: 'tail_lines', n: 7 }, detail: 'wide', match: contains('Do you want') },
      { state: 'idle', region: { kind: 'visible' }, match: contains('Do you want') },
    ]);
    const ev = evaluate(m, snap(tail, { visibleHeight: 6 }));
    expect(ev.matches.map((r) => r.matched)).toEqual([false, true, false]);
    expect(ev.evidence.map((e) => e.label)).toEqual(['demo r1']);
  });

  it('a g-flag regex rule gives the same answer on two evaluations and twice within one', () => {
    const g = re('esc to interrupt', 'gu');
    const m = manifest('demo', [
      { state: 'working', match: g },
      { state: 'working', detail: 'again', match: g },
    ]);
    const s = snap('• Working (0s • esc to interrupt)');
    const first = evaluate(m, s);
    const second = evaluate(m, s);
    expect(first.matches.map((r) => r.matched)).toEqual([true, true]);
    expect(second).toEqual(first);
  });
});

describe('evaluate: real screen shapes (hand-written)', () => {
  // The blocking dialog has the selection cursor in front of option 1; prose that merely quotes
  // an option, or an old dialog above the visible rows, must not claim blocked.
  const claude = manifest('claude', [
    { state: 'blocked', detail: 'permission', region: { kind: 'visible' }, match: lineRe('^\\s*❯\\s*1\\.\\s*Yes') },
    { state: 'working', region: { kind: 'title' }, match: re('^[⠀-⣿] ') },
    { state: 'idle', region: { kind: 'title' }, match: re('^✳ ') },
    { state: 'idle', region: { kind: 'tail_lines', n: 6 }, match: re('⏵⏵|⏸') },
  ]);
  const E = '\x1b';

  it('a permission dialog with SGR around the cursor blocks', () => {
    const tail = [
      `${E}[39m Do you want to create ${E}[1mnotes.txt${E}[0m?`,
      ` ${E}[38;5;153m❯${E}[39m ${E}[38;5;153m1. Yes${E}[39m`,
      `   2. Yes, allow all edits during this session`,
      `   3. No`,
      '',
    ].join('\n');
    const ev = evaluate(claude, snap(tail, { title: '✳ Run shell command echo test' }));
    expect(ev.evidence.map((e) => [e.label, e.claim])).toEqual([
      ['claude r0', { kind: 'state', state: 'blocked', detail: 'permission' }],
      ['claude r2', { kind: 'state', state: 'idle', detail: null }],
    ]);
  });

  it('prose quoting "1. Yes, inline it" does not block; the mode line gives idle', () => {
    const tail = [
      `${E}[38;5;231m⏺${E}[39m Do you want to keep the helper separate? Options:`,
      `  1. Yes, inline it`,
      `  2. No, keep it`,
      `${E}[38;5;246m✻${E}[39m Sautéed for 5m 34s`,
      `  ⏵⏵ bypass permissions on (shift+tab to cycle)`,
    ].join('\n');
    const ev = evaluate(claude, snap(tail));
    expect(ev.evidence.map((e) => e.label)).toEqual(['claude r3']);
  });

  it('an old dialog scrolled above the visible rows does not block', () => {
    const dialog = ' ❯ 1. Yes\n';
    const tail = dialog + 'later output\n'.repeat(11) + '  ⏸ manual mode on';
    expect(evaluate(claude, snap(tail, { visibleHeight: 12 })).evidence.map((e) => e.label)).toEqual(['claude r3']);
    expect(evaluate(claude, snap(tail, { visibleHeight: 13 })).evidence.map((e) => e.label)).toEqual(['claude r0', 'claude r3']);
  });

  it('a braille spinner in the title claims working from the title', () => {
    const ev = evaluate(claude, snap('· Flambéing…', { title: '⠂ Run shell command echo test' }));
    expect(ev.evidence).toEqual([{ provenance: 'title', claim: { kind: 'state', state: 'working', detail: null }, at: AT, label: 'claude r1' }]);
  });
});
