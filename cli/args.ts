// A small strict argv parser, driven by the verb table (cli/verb-table.ts): global flags are
// valid before or after the verb, every other flag belongs to the verb, and anything unknown is a
// usage error (exit 2). Each flag has a type, and a verb reads its options typed by its own flags.
// Also the shape of one verb's entry in that table, in the manner of tmux's cmd_entry: its flags,
// usage and help, whether it takes words, and how to load its code. The parser, `tma help`,
// `--help`, the typo suggestion and `tma completions` all read these and nothing else. (One module
// with the parser, so every verb's start-up loads one small file for both.)

/** boolean: present or not; string: one value; number: one plain decimal; list: repeatable. */
export type FlagType = 'boolean' | 'string' | 'number' | 'list';

export interface Flag {
  readonly type: FlagType;
  /** A one-letter alias: `-L` for `--socket-name`. */
  readonly short?: string;
  /** Fixed values worth offering in shell completion; anything known only at run time is not. */
  readonly values?: readonly string[];
  /** number: whole numbers only. */
  readonly integer?: boolean;
  /** number: the usage error for a value that is not one, in the verb's words. */
  readonly invalid?: (raw: string) => string;
}

export type Flags = Readonly<Record<string, Flag>>;

type ValueOf<T extends FlagType> = T extends 'boolean' ? true : T extends 'number' ? number : T extends 'list' ? string[] : string;

/** A verb's parsed options: each flag it was given, typed by its table entry. */
export type Options<F extends Flags> = { -readonly [K in keyof F]?: ValueOf<F[K]['type']> };

/** The flags of every verb in `V` at once: what a parse against all of them may return. */
export type AnyVerbFlags<V extends Readonly<Record<string, Flags>>> = (
  V[keyof V] extends infer U ? (U extends Flags ? (k: U) => void : never) : never
) extends (k: infer I) => void
  ? I & Flags
  : never;

export const bool = { type: 'boolean' } as const;
export const text = { type: 'string' } as const;
export const list = { type: 'list' } as const;

export class UsageError extends Error {}

export const GLOBAL_FLAGS = {
  // Repeatable only for `tma collector`, which follows several servers; one-shot verbs take one.
  'socket-name': { type: 'list', short: 'L' },
  'socket-path': { type: 'list', short: 'S' },
  config: text,
  'manifest-dir': text,
  hub: text,
  'token-file': text,
  // Trust for a hub with its own certificate (`[tls]`): its PEM, or its SHA-256 pinned.
  'hub-ca': text,
  'hub-fingerprint': text,
  'debug-timing': bool,
  // Read by the long-running verbs (hub, collector); the others log nothing.
  'log-level': text,
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'V' },
} as const satisfies Flags;

export type GlobalOptions = Options<typeof GLOBAL_FLAGS>;

/** No flags: a function that reads only the globals takes any verb's Parsed. */
// eslint-disable-next-line @typescript-eslint/no-generated-empty-object-type -- the empty options type is the point: every verb's opts fit it
export type NoFlags = Readonly<Record<never, Flag>>;

export interface Parsed<F extends Flags = NoFlags> {
  verb: string | null;
  globals: GlobalOptions;
  opts: Options<F>;
  positionals: string[];
}

type Values = Record<string, string | number | true | string[] | undefined>;

function lookup(spec: Flags, token: string): [string, Flag] | null {
  if (token.startsWith('--')) {
    const name = token.slice(2);
    return Object.hasOwn(spec, name) ? [name, spec[name]!] : null;
  }
  const short = token.slice(1);
  for (const [name, s] of Object.entries(spec)) if (s.short === short) return [name, s];
  return null;
}

function numberOf(name: string, f: Flag, raw: string): number {
  const ok = f.integer ? /^\d+$/.test(raw) && Number.isSafeInteger(Number(raw)) : /^\d+(\.\d+)?$/.test(raw);
  if (!ok) throw new UsageError(f.invalid?.(raw) ?? `--${name} takes a number, not "${raw}"`);
  return Number(raw);
}

function store(into: Values, name: string, f: Flag, value: string | true): void {
  if (f.type === 'list') {
    const l = (into[name] as string[] | undefined) ?? [];
    l.push(value as string);
    into[name] = l;
  } else if (into[name] !== undefined && f.type !== 'boolean') {
    throw new UsageError(`--${name} given more than once`);
  } else {
    into[name] = f.type === 'number' ? numberOf(name, f, value as string) : value;
  }
}

/** `argv` read against the globals and `verbs` (each verb's flags); throws UsageError. */
export function parseArgv<V extends Readonly<Record<string, Flags>>>(argv: readonly string[], verbs: V): Parsed<AnyVerbFlags<V>> {
  const globals: Values = {};
  const opts: Values = {};
  const out = { verb: null as string | null, globals, opts, positionals: [] as string[] };
  let onlyPositionals = false;
  for (let i = 0; i < argv.length; i++) {
    let tok = argv[i]!;
    if (onlyPositionals || tok === '-' || !tok.startsWith('-')) {
      if (out.verb === null) {
        if (!Object.hasOwn(verbs, tok)) throw new UsageError(`unknown command "${tok}"`);
        out.verb = tok;
      } else out.positionals.push(tok);
      continue;
    }
    if (tok === '--') {
      onlyPositionals = true;
      continue;
    }
    let inline: string | undefined;
    const eq = tok.indexOf('=');
    if (tok.startsWith('--') && eq > 0) {
      inline = tok.slice(eq + 1);
      tok = tok.slice(0, eq);
    }
    const global = lookup(GLOBAL_FLAGS, tok);
    const hit = global ?? lookup(out.verb ? verbs[out.verb]! : {}, tok);
    if (!hit) throw new UsageError(out.verb ? `unexpected flag ${tok} for "${out.verb}"` : `unexpected flag ${tok}`);
    const [name, f] = hit;
    const target = global ? globals : opts;
    if (f.type === 'boolean') {
      if (inline !== undefined) throw new UsageError(`--${name} takes no value`);
      store(target, name, f, true);
      continue;
    }
    const value = inline ?? argv[++i];
    if (value === undefined) throw new UsageError(`--${name} needs a value`);
    store(target, name, f, value);
  }
  // The values were stored by the flags' own types, as Options spells them.
  return out as unknown as Parsed<AnyVerbFlags<V>>;
}

// ---- the verb table's entries ---------------------------------------------------------------

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
