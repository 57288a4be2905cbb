// The transition ring behind `tma debug transitions`, and the document the verb prints.

import { describe, expect, it } from 'vitest';
import { readTransitions, renderTransitions } from '../../cli/verbs/debug-transitions.js';
import type { State } from '../../collector/core/types.js';
import { TRANSITION_CAP, TransitionRing, type PaneState } from '../../collector/engine/transition-ring.js';

const T0 = 1_700_000_000_000;
const pane = (id: string, state: State | null, since = T0): PaneState => ({ pane: id, stamp: state === null ? null : { state, since, source: 'capture' } });

describe('TransitionRing', () => {
  it('records the first state of each pane from null, then only changes of state', () => {
    const r = new TransitionRing();
    r.observe([pane('%1', 'working'), pane('%2', 'idle'), pane('%3', null)]);
    r.observe([pane('%1', 'working'), pane('%2', 'idle')]);
    r.observe([pane('%1', 'idle', T0 + 5000), pane('%2', 'idle')]);
    expect(r.document()).toEqual({
      schema: 1,
      cap: TRANSITION_CAP,
      recorded: 3,
      transitions: [
        { pane: '%1', from: null, to: 'working', at: T0, source: 'capture' },
        { pane: '%2', from: null, to: 'idle', at: T0, source: 'capture' },
        { pane: '%1', from: 'working', to: 'idle', at: T0 + 5000, source: 'capture' },
      ],
    });
  });

  it('a pane that loses its stamp or vanishes starts over from null when it comes back', () => {
    const r = new TransitionRing();
    r.observe([pane('%1', 'working'), pane('%2', 'idle')]);
    r.observe([pane('%1', null)]);
    r.observe([pane('%1', 'working'), pane('%2', 'idle')]);
    expect(r.document().transitions.map((t) => [t.pane, t.from, t.to])).toEqual([
      ['%1', null, 'working'],
      ['%2', null, 'idle'],
      ['%1', null, 'working'],
      ['%2', null, 'idle'],
    ]);
  });

  it(`keeps the last ${TRANSITION_CAP}, oldest first, and counts every one recorded`, () => {
    const r = new TransitionRing();
    for (let i = 0; i < TRANSITION_CAP + 44; i++) r.observe([pane('%1', i % 2 ? 'idle' : 'working', T0 + i)]);
    const d = r.document();
    expect(d.recorded).toBe(TRANSITION_CAP + 44);
    expect(d.transitions).toHaveLength(TRANSITION_CAP);
    expect(d.transitions[0]!.at).toBe(T0 + 44);
    expect(d.transitions.at(-1)!.at).toBe(T0 + TRANSITION_CAP + 43);
    expect(d.transitions.map((t) => t.at)).toEqual([...d.transitions.map((t) => t.at)].sort((a, b) => a - b));
  });

  it('the document has schema first and exactly the contract keys, in order', () => {
    const r = new TransitionRing();
    r.observe([pane('%1', 'blocked')]);
    const d = r.document();
    expect(Object.keys(d)).toEqual(['schema', 'cap', 'recorded', 'transitions']);
    expect(Object.keys(d.transitions[0]!)).toEqual(['pane', 'from', 'to', 'at', 'source']);
    // What the verb prints is re-read and re-emitted with the same keys.
    const printed = JSON.parse(JSON.stringify(readTransitions(JSON.stringify(d))));
    expect(Object.keys(printed)).toEqual(['schema', 'cap', 'recorded', 'transitions']);
    expect(Object.keys(printed.transitions[0])).toEqual(['pane', 'from', 'to', 'at', 'source']);
    expect(printed).toEqual(d);
  });
});

describe('readTransitions', () => {
  const good = { schema: 1, cap: 256, recorded: 1, transitions: [{ pane: '%1', from: null, to: 'idle', at: T0, source: 'hook' }] };

  it('drops keys the contract does not name', () => {
    const extra = { ...good, title: 'x', transitions: [{ ...good.transitions[0], title: 'secret' }] };
    expect(JSON.stringify(readTransitions(JSON.stringify(extra)))).not.toContain('secret');
  });

  it('refuses what is not a transitions document', () => {
    for (const bad of [
      '',
      'nope',
      '{}',
      JSON.stringify({ ...good, schema: 2 }),
      JSON.stringify({ ...good, transitions: [{ ...good.transitions[0], to: 'sleeping' }] }),
      JSON.stringify({ ...good, transitions: [{ ...good.transitions[0], pane: 'x' }] }),
    ]) {
      expect(readTransitions(bad)).toBeNull();
    }
  });

  it('renders one line per transition for people', () => {
    const text = renderTransitions(readTransitions(JSON.stringify(good))!);
    expect(text.split('\n')[0]).toBe('1 transition(s) recorded since the collector started; the last 1 of at most 256 kept');
    expect(text).toContain(`${new Date(T0).toISOString()}  %1     -       -> idle     hook`);
  });
});
