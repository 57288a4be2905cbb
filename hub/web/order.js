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
