// Matcher evaluation over one region's text.

import type { Matcher } from './types.js';

// A RegExp with `g` or `y` carries `lastIndex` from one test to the next, which would make the
// same screen match on one poll and miss on the next; `y` would also pin the search to
// lastIndex. Such patterns are evaluated through a stateless twin made once per RegExp.
const statelessTwins = new WeakMap<RegExp, RegExp>();

function stateless(re: RegExp): RegExp {
  if (!re.global && !re.sticky) return re;
  let twin = statelessTwins.get(re);
  if (twin === undefined) {
    twin = new RegExp(re.source, re.flags.replace(/[gy]/g, ''));
    statelessTwins.set(re, twin);
  }
  return twin;
}

/** True when the matcher accepts `text` (already ANSI-stripped region text). */
export function matches(m: Matcher, text: string): boolean {
  switch (m.kind) {
    case 'contains':
      return text.includes(m.text);
    case 'regex':
      // No multiline flag is added: `^` and `$` mean the ends of the whole region.
      return stateless(m.re).test(text);
    case 'line_regex': {
      const re = stateless(m.re);
      return text.split('\n').some((line) => re.test(line));
    }
    case 'any':
      return m.of.some((inner) => matches(inner, text));
    case 'all':
      return m.of.every((inner) => matches(inner, text));
    case 'not':
      return !matches(m.of, text);
  }
}
