// Keeps a list's order still while a person is about to tap it. The page asks for the order it
// would like; while held, the order shown is the last one, rows that left stay in their place
// (the view greys them) and newcomers go to the end, so nothing already on screen moves. Pure.

export class OrderKeeper {
  constructor() {
    /** The keys in the order last shown. @type {string[]} */
    this.shown = [];
  }

  /**
   * `wanted`: keys in the order the list would have now. Returns `{ keys, left }`: the order to
   * show, and which of those keys are only kept in place (no longer wanted).
   * @param {readonly string[]} wanted
   * @param {boolean} held
   * @returns {{ keys: string[]; left: Set<string> }}
   */
  order(wanted, held) {
    if (!held) {
      this.shown = wanted.slice();
      return { keys: this.shown.slice(), left: /** @type {Set<string>} */ (new Set()) };
    }
    const want = new Set(wanted);
    const had = new Set(this.shown);
    const keys = [...this.shown, ...wanted.filter((k) => !had.has(k))];
    this.shown = keys;
    return { keys: keys.slice(), left: new Set(keys.filter((k) => !want.has(k))) };
  }
}

/**
 * When the list may move again: held while a confirmation is open or an act is in flight, and
 * for `afterMs` after the last tap or answer, so the row a thumb is over stays under it.
 */
export class Hold {
  /** @param {number} [afterMs] */
  constructor(afterMs = 3000) {
    this.afterMs = afterMs;
    this.until = 0;
    /** @type {Set<string>} */
    this.reasons = new Set();
  }

  /**
   * Hold for `afterMs` from `now` (a tap, an answer).
   * @param {number} now
   */
  touch(now) {
    this.until = Math.max(this.until, now + this.afterMs);
  }

  /** Hold while `reason` is set (a dialog, a request in flight); the quiet period starts on release.
   * @param {string} reason
   * @param {boolean} on
   * @param {number} now
   */
  set(reason, on, now) {
    if (on) this.reasons.add(reason);
    else if (this.reasons.delete(reason)) this.touch(now);
  }

  /** @param {number} now */
  held(now) {
    return this.reasons.size > 0 || now < this.until;
  }
}

/**
 * Which of `wanted` may stay where they are when `current` is put into `wanted`'s order: the
 * largest set already in the right order relative to one another (a longest increasing run of
 * their current positions). Moving only the others reorders the list with the fewest moves, so
 * one row changing place moves one element, not every one after it.
 * @template T
 * @param {readonly T[]} current
 * @param {readonly T[]} wanted
 * @returns {Set<T>}
 */
export function stayPut(current, wanted) {
  /** @type {Map<T, number>} */
  const at = new Map();
  current.forEach((c, i) => at.set(c, i));
  /** @type {number[]} */
  const pos = [];
  /** @type {T[]} */
  const items = [];
  for (const w of wanted) {
    const i = at.get(w);
    if (i !== undefined) {
      pos.push(i);
      items.push(w);
    }
  }
  // Patience sorting: tails[len] is the index (into pos) ending the best run of length len + 1.
  /** @type {number[]} */
  const tails = [];
  /** @type {number[]} */
  const prev = [];
  for (let k = 0; k < pos.length; k++) {
    let lo = 0;
    let hi = tails.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (pos[tails[mid]] < pos[k]) lo = mid + 1;
      else hi = mid;
    }
    prev[k] = lo > 0 ? tails[lo - 1] : -1;
    tails[lo] = k;
  }
  /** @type {Set<T>} */
  const keep = new Set();
  for (let k = tails.length ? tails[tails.length - 1] : -1; k >= 0; k = prev[k]) keep.add(items[k]);
  return keep;
}
