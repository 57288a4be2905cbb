// The page's stream splitter (SseSplitter in hub/web/format.js): however the bytes are cut into
// chunks, the same events come out as from reading the whole text at once, and a document of
// several megabytes in small chunks costs time linear in its size, not its square.

import { describe, expect, it } from 'vitest';
import { SseSplitter, sseEvents } from '../../hub/web/format.js';

/** A small deterministic generator, so a failure can be replayed. */
function rng(seed: number): () => number {
  let x = seed >>> 0;
  return () => {
    x = (x * 1664525 + 1013904223) >>> 0;
    return x / 2 ** 32;
  };
}

describe('web page: splitting the stream chunk by chunk', () => {
  it('finds the same events as one read of the whole text, wherever the chunks are cut', () => {
    const eol = ['\n', '\r\n', '\r'];
    for (let seed = 1; seed <= 200; seed++) {
      const r = rng(seed);
      const pick = <T>(xs: T[]) => xs[Math.floor(r() * xs.length)]!;
      let text = '';
      for (let e = 0; e < 12; e++) {
        const nl = pick(eol);
        if (r() < 0.3) text += `: keepalive${nl}${nl}`;
        else text += `data: {"n":${e},"s":"${'y'.repeat(Math.floor(r() * 40))}"}${nl}${r() < 0.2 ? `data: more${nl}` : ''}${nl}`;
      }
      const whole = sseEvents(text).events;
      const split = new SseSplitter();
      const got: string[] = [];
      for (let i = 0; i < text.length;) {
        const n = 1 + Math.floor(r() * 9);
        got.push(...split.push(text.slice(i, i + n)));
        i += n;
      }
      expect(got, `seed ${seed}`).toEqual(whole);
    }
  });

  it('reads a 6 MB document in 16 KB chunks in well under a second (re-splitting the tail took seconds)', () => {
    const doc = JSON.stringify({ schema: 1, agents: Array.from({ length: 12_000 }, (_, i) => ({ pane: `%${i}`, summary: 'x'.repeat(450) })) });
    const text = `data: ${doc}\n\n`;
    const split = new SseSplitter();
    const t = performance.now();
    const got: string[] = [];
    for (let i = 0; i < text.length; i += 16_384) got.push(...split.push(text.slice(i, i + 16_384)));
    const ms = performance.now() - t;
    expect(got).toHaveLength(1);
    expect(got[0]!.length).toBe(doc.length);
    expect(ms).toBeLessThan(1500);
  });
});
