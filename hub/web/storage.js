// What the page keeps on this device (the token, the alerts choice). Browsers may refuse storage
// outright (blocked site data, some private windows) and then throw on every touch of it: the
// page then keeps the values for this visit only, instead of breaking at its first line.

/** @type {Map<string, string>} */
const visit = new Map();

/** @returns {Storage | null} */
function device() {
  try {
    return window.localStorage;
  } catch {
    return null;
  }
}

/** @param {string} key */
export function recall(key) {
  try {
    const v = device()?.getItem(key);
    if (v !== undefined && v !== null) return v;
  } catch {
    // Refused: what this visit was told is all there is.
  }
  return visit.get(key) ?? null;
}

/**
 * @param {string} key
 * @param {string} value
 */
export function keep(key, value) {
  visit.set(key, value);
  try {
    device()?.setItem(key, value);
  } catch {
    // Refused or full: kept for this visit only.
  }
}

/** @param {string} key */
export function forget(key) {
  visit.delete(key);
  try {
    device()?.removeItem(key);
  } catch {
    // Refused: nothing was kept there to forget.
  }
}
