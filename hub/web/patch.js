// Writing to the page's elements only where something differs. The browser redoes style and
// layout for every write, equal or not, so a redraw that rewrote 500 unchanged rows cost as much
// as one that changed them all; here an unchanged row costs a few comparisons and no layout.
// What was written is remembered beside the element, so an element's text or data attribute is
// written through setText/setData only (anything else writing it would go unnoticed here).

import { stayPut } from './order.js';

/**
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {string} [className]
 * @param {string} [text]
 * @returns {HTMLElementTagNameMap[K]}
 */
export function el(tag, className, text) {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined) e.textContent = text;
  return e;
}

/**
 * @param {HTMLElement} e
 * @param {string} text
 */
export function setText(e, text) {
  if (TEXT.get(e) === text) return;
  TEXT.set(e, text);
  e.textContent = text;
}
/** What each element's text was last set to here: reading it back from the DOM costs more. @type {WeakMap<HTMLElement, string>} */
const TEXT = new WeakMap();

/**
 * @param {HTMLElement} e
 * @param {string} name
 * @param {string} value
 */
export function setAttr(e, name, value) {
  if (e.getAttribute(name) !== value) e.setAttribute(name, value);
}

/**
 * @param {HTMLElement} e
 * @param {string} key
 * @param {string} value
 */
export function setData(e, key, value) {
  let d = DATA.get(e);
  if (!d) DATA.set(e, (d = /** @type {Map<string, string>} */ (new Map())));
  if (d.get(key) === value) return;
  d.set(key, value);
  e.dataset[key] = value;
}
/**
 * A data attribute as last set by setData.
 * @param {HTMLElement} e
 * @param {string} key
 * @returns {string | undefined}
 */
export function dataOf(e, key) {
  return DATA.get(e)?.get(key);
}
/** Each element's data attributes as last set here: `dataset` reads are slow. @type {WeakMap<HTMLElement, Map<string, string>>} */
const DATA = new WeakMap();

/**
 * @param {HTMLElement} e
 * @param {boolean} hidden
 */
export function setHidden(e, hidden) {
  if (e.hidden !== hidden) e.hidden = hidden;
}

const reducedMotion = () => window.matchMedia?.('(prefers-reduced-motion: reduce)').matches === true;

/**
 * Put `wanted` into `parent` in this order, moving only what must move (see stayPut): a node
 * taken out and put back costs the browser its whole subtree's style and layout again. Elements
 * that end up somewhere else on screen glide there, so a re-sort is seen rather than a jump.
 * @param {HTMLElement} parent
 * @param {readonly HTMLElement[]} wanted
 * @param {boolean} animate
 */
export function arrange(parent, wanted, animate) {
  const same = parent.children.length === wanted.length && wanted.every((c, i) => parent.children[i] === c);
  if (same) return;
  const before = animate ? new Map(wanted.map((c) => [c, c.isConnected ? c.getBoundingClientRect().top : null])) : null;
  const want = new Set(wanted);
  for (const c of [...parent.children]) if (!want.has(/** @type {HTMLElement} */ (c))) c.remove();
  const have = /** @type {HTMLElement[]} */ ([...parent.children]);
  const keep = stayPut(have, wanted);
  /** @type {HTMLElement | null} */
  let next = null;
  for (let i = wanted.length - 1; i >= 0; i--) {
    const c = wanted[i];
    if (!keep.has(c)) parent.insertBefore(c, next);
    next = c;
  }
  if (!before || reducedMotion()) return;
  for (const c of wanted) {
    const was = before.get(c);
    if (was === null || was === undefined) continue;
    const dy = was - c.getBoundingClientRect().top;
    if (Math.abs(dy) < 1) continue;
    c.animate?.([{ transform: `translateY(${dy}px)` }, { transform: 'none' }], { duration: 350, easing: 'ease-out' });
    c.classList.add('moved');
    setTimeout(() => c.classList.remove('moved'), 900);
  }
}
