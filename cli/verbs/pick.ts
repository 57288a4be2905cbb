// Bare `tma` on a terminal: the picker. Type to filter (fuzzily, from the first key), Enter jumps,
// Tab opens the row's action menu, Esc leaves. Bound to prefix+a in a popup by install-keys.

import type { Parsed } from '../args.js';
import type { WATCH } from '../verb-flags.js';
import { needTerminal, viewMain } from './watch.js';

export async function main(p: Parsed<typeof WATCH>): Promise<number> {
  needTerminal('the picker');
  return viewMain(p, { mode: 'picker', table: false, filter: p.positionals.join(' ') });
}
