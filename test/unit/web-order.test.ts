// stayPut: which elements of a list may stay where they are when it is put into a new order.

import { describe, expect, it } from 'vitest';
import { stayPut } from '../../hub/web/order.js';

/** The list after moving only what stayPut does not keep, as arrange does it. */
function moved(current: string[], wanted: string[]): { result: string[]; moves: number } {
  const keep = stayPut(current, wanted);
  const list = current.filter((c) => wanted.includes(c));
  let moves = 0;
  let next: string | null = null;
  for (let i = wanted.length - 1; i >= 0; i--) {
    const c = wanted[i]!;
    if (!keep.has(c)) {
      const from = list.indexOf(c);
      if (from >= 0) list.splice(from, 1);
      list.splice(next === null ? list.length : list.indexOf(next), 0, c);
      moves++;
    }
    next = c;
  }
  return { result: list, moves };
}

describe('stayPut', () => {
  it('keeps everything of a list already in order', () => {
    expect([...stayPut(['a', 'b', 'c'], ['a', 'b', 'c'])]).toEqual(['c', 'b', 'a']);
  });
  it('moves one element when one changed place, wherever it went', () => {
    const rows = Array.from({ length: 500 }, (_, i) => `r${i}`);
    const first = [...rows.slice(1), rows[0]!];
    expect(moved(rows, first)).toEqual({ result: first, moves: 1 });
    const last = [rows[499]!, ...rows.slice(0, 499)];
    expect(moved(rows, last)).toEqual({ result: last, moves: 1 });
  });
  it('orders any shuffle, with new and dropped elements, in fewest moves', () => {
    let seed = 7;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let round = 0; round < 50; round++) {
      const current = Array.from({ length: 40 }, (_, i) => `r${i}`);
      const wanted = current.filter(() => rand() > 0.2).concat(['n1', 'n2']);
      for (let i = wanted.length - 1; i > 0; i--) {
        if (rand() > 0.7) continue;
        const j = Math.floor(rand() * (i + 1));
        [wanted[i], wanted[j]] = [wanted[j]!, wanted[i]!];
      }
      const { result } = moved(current, wanted);
      expect(result).toEqual(wanted);
      // The ones kept were already in the wanted order relative to one another.
      const keep = stayPut(current, wanted);
      const at = wanted.filter((k) => keep.has(k)).map((k) => current.indexOf(k));
      expect(at.every((x, i) => x >= 0 && (i === 0 || x > at[i - 1]!))).toBe(true);
    }
  });
});
