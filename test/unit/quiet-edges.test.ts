import { describe, expect, it } from 'vitest';
import { QuietEdges, outputPane } from '../../collector/tmux/control-output.js';

const T = { quietMs: 150, maxBusyMs: 1000, minGapMs: 250 };

describe('quiet edges from %output', () => {
  it('a burst gives one look, quietMs after its last output', () => {
    const q = new QuietEdges(T);
    q.output('%1', 0);
    q.output('%1', 100);
    expect(q.nextAt()).toBe(250);
    expect(q.due(249)).toEqual([]);
    expect(q.due(250)).toEqual(['%1']);
    expect(q.nextAt()).toBeNull();
    expect(q.due(5000)).toEqual([]);
  });

  it('a pane that never stops painting is still looked at every maxBusyMs', () => {
    const q = new QuietEdges(T);
    const looks: number[] = [];
    for (let t = 0; t <= 3000; t += 50) {
      q.output('%2', t);
      if (q.due(t).length) looks.push(t);
    }
    expect(looks).toEqual([1000, 2050]);
  });

  it('a burst that never settles is first looked at firstBusyMs in, then every maxBusyMs', () => {
    const q = new QuietEdges({ ...T, firstBusyMs: 300 });
    const looks: number[] = [];
    const paint = (from: number, to: number) => {
      for (let t = from; t <= to; t += 50) {
        q.output('%2', t);
        if (q.due(t).length) looks.push(t);
      }
    };
    paint(0, 3000);
    expect(looks).toEqual([300, 1350, 2400]);
    // It settles (one quiet look), then starts painting again: a new burst, looked at early again.
    expect(q.due(3150)).toEqual(['%2']);
    looks.length = 0;
    paint(4000, 5000);
    expect(looks).toEqual([4300]);
  });

  it('without firstBusyMs a burst waits maxBusyMs, as before', () => {
    const q = new QuietEdges(T);
    for (let t = 0; t <= 900; t += 50) {
      q.output('%4', t);
      expect(q.due(t)).toEqual([]);
    }
  });

  it('never two looks at one pane closer than minGapMs', () => {
    const q = new QuietEdges(T);
    q.output('%3', 0);
    expect(q.due(150)).toEqual(['%3']);
    q.output('%3', 160);
    expect(q.nextAt()).toBe(400); // quiet at 310, but the gap holds it to 150 + 250
    expect(q.due(310)).toEqual([]);
    expect(q.due(400)).toEqual(['%3']);
  });

  it('reads the pane id of %output lines only', () => {
    expect(outputPane({ type: 'notification', name: 'output', args: '%12 hello\\015' })).toBe('%12');
    expect(outputPane({ type: 'notification', name: 'window-add', args: '@1' })).toBeNull();
    expect(outputPane({ type: 'notification', name: 'output', args: 'junk' })).toBeNull();
  });
});
