// What the verb table (cli/verb-table.ts) says about one verb, in the manner of tmux's cmd_entry:
// its flags, its usage and help, whether it takes words, and how to load its code. The parser,
// `tma help`, `--help`, the typo suggestion and `tma completions` all read these and nothing else.

import type { Flags, Parsed } from './args.js';

/** Where `tma help` lists a verb; hidden verbs (run by hooks and the act broker) are not listed, suggested or completed. */
export type Section = 'commands' | 'other' | 'setup' | 'hidden';

/** A verb's code: its options typed by its flags, and the table for the verbs that print it. */
export type VerbMain<F extends Flags = Flags> = (p: Parsed<F>, table: VerbTable) => Promise<number>;

export interface VerbEntry<F extends Flags = Flags> {
  readonly flags: F;
  /** Its usage lines, as `tma help VERB` starts (`tma ls [--json] …`). */
  readonly usage: readonly string[];
  /** What it does and an example or two, after the usage; indented two spaces. */
  readonly help: string;
  /** Its lines in `tma help`'s overview: a synopsis (possibly several lines) and what it does. */
  readonly overview: readonly (readonly [synopsis: string, summary: string])[];
  readonly section: Section;
  /** false: a stray word is a usage error; else the words completion offers (fixed ones only). */
  readonly positionals: false | { readonly words?: readonly string[] };
  /** Imported only when the verb runs, so parsing and help load no verb's code. */
  readonly load: () => Promise<VerbMain<F>>;
  /** With `--hub` (or TMA_HUB): the code that asks a hub instead of local tmux. */
  readonly fleet?: () => Promise<VerbMain<F>>;
}

export type VerbTable = Readonly<Record<string, VerbEntry>>;

/**
 * One entry, its flags' types kept for the table's own type. Each verb's code is checked against
 * its flags here; the parser fills its options from the same flags.
 */
export const verb = <F extends Flags>(e: VerbEntry<F>): VerbEntry<F> => e;

/** Each verb's flags, as the parser takes them. */
export const flagsByVerb = (table: VerbTable): Record<string, Flags> => Object.fromEntries(Object.entries(table).map(([v, e]) => [v, e.flags]));

/** The verbs a person sees: listed, suggested for a typo, completed. */
export const visibleVerbs = (table: VerbTable): string[] => Object.keys(table).filter((v) => table[v]!.section !== 'hidden');
