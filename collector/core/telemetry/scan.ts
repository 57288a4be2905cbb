// Reading single values out of telemetry payloads without parsing them as JSON. The reference
// scans text, and its answers on odd payloads (a key that first appears nested elsewhere, a
// number followed by junk, a truncated line) are part of what users see, so the same scan is
// kept here rather than a JSON.parse that would disagree on exactly those payloads.

import { readString } from '../hook-event.js';

const WS = /\s/;

/** Index just past `"key"`, `:` and the whitespace around it, or -1. Only the first `"key"` counts. */
function valueStart(text: string, key: string, from = 0): number {
  const at = text.indexOf(`"${key}"`, from);
  if (at < 0) return -1;
  let i = at + key.length + 2;
  while (i < text.length && WS.test(text[i]!)) i++;
  if (text[i] !== ':') return -1;
  i++;
  while (i < text.length && WS.test(text[i]!)) i++;
  return i;
}

/**
 * The string value of the first `"key"`. `\n` and `\t` decode; any other escaped character
 * stands for itself (so `\u00e9` reads as `u00e9`). Not a string, or unterminated: null.
 */
export function findString(text: string, key: string, from = 0): string | null {
  const i = valueStart(text, key, from);
  return i < 0 || text[i] !== '"' ? null : readString(text, i + 1);
}

const NUMBER_CHARS = /[0-9.eE+-]/;
// What a strict float parse accepts: Number() alone would also take '' , hex or 'Infinity'.
const FLOAT = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** The number after the first `"key"` at or after `from`: the run of number characters, parsed strictly. */
export function findNumber(text: string, key: string, from = 0): number | null {
  const start = valueStart(text, key, from);
  if (start < 0) return null;
  let end = start;
  while (end < text.length && NUMBER_CHARS.test(text[end]!)) end++;
  const token = text.slice(start, end);
  if (token === '' || !FLOAT.test(token)) return null;
  const n = Number(token);
  return Number.isFinite(n) ? n : null;
}

/** `findNumber` searched only after the first occurrence of `"anchor"`, so a same-named key elsewhere cannot answer. */
export function findNumberAfter(text: string, anchor: string, key: string): number | null {
  const at = text.indexOf(`"${anchor}"`);
  return at < 0 ? null : findNumber(text, key, at + anchor.length + 2);
}

/** A token count: finite and not negative, fractions dropped. */
export function count(n: number | null): number | null {
  return n !== null && Number.isFinite(n) && n >= 0 ? Math.trunc(n) : null;
}

export function clampPct(n: number): number {
  return Math.min(100, Math.max(0, Math.round(n)));
}

/**
 * The text of the object that is the first `"key"`'s value, braces included; `undefined` when
 * the key is absent, null when its value is not an object (e.g. `null`) or never closes.
 */
export function objectOf(text: string, key: string): string | null | undefined {
  if (!text.includes(`"${key}"`)) return undefined;
  const start = valueStart(text, key);
  if (start < 0 || text[start] !== '{') return null;
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i]!;
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{') depth++;
    else if (c === '}' && --depth === 0) return text.slice(start, i + 1);
  }
  return null;
}
