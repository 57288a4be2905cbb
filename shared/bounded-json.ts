// Limits for free-form JSON a peer may send (a row's `quota`, additive keys from a newer
// collector). Checked with an explicit stack, never recursion, so a value nested thousands of
// levels deep is refused instead of overflowing the checker — or, later, whoever serialises it.

export interface JsonBounds {
  depth: number;
  keys: number;
  items: number;
  stringChars: number;
  /** Values (scalars and containers) in the whole tree. */
  nodes: number;
}

export const QUOTA_BOUNDS: JsonBounds = { depth: 4, keys: 32, items: 32, stringChars: 256, nodes: 512 };

/** Why `value` breaks `b`, or null when it is a plain JSON value within them. */
export function jsonBoundsProblem(value: unknown, b: JsonBounds): string | null {
  const stack: { v: unknown; depth: number }[] = [{ v: value, depth: 0 }];
  let nodes = 0;
  while (stack.length > 0) {
    const { v, depth } = stack.pop()!;
    if (++nodes > b.nodes) return `more than ${b.nodes} values`;
    if (v === null || typeof v === 'boolean') continue;
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) return 'a number that is not finite';
      continue;
    }
    if (typeof v === 'string') {
      if (v.length > b.stringChars) return `a string longer than ${b.stringChars} characters`;
      continue;
    }
    if (typeof v !== 'object') return `a ${typeof v}, which is not JSON`;
    if (depth >= b.depth) return `nested deeper than ${b.depth} levels`;
    if (Array.isArray(v)) {
      if (v.length > b.items) return `an array of more than ${b.items} items`;
      for (const x of v) stack.push({ v: x, depth: depth + 1 });
      continue;
    }
    const keys = Object.keys(v);
    if (keys.length > b.keys) return `an object with more than ${b.keys} keys`;
    for (const k of keys) {
      if (k.length > b.stringChars) return `a key longer than ${b.stringChars} characters`;
      stack.push({ v: (v as Record<string, unknown>)[k], depth: depth + 1 });
    }
  }
  return null;
}
