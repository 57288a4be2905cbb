// A small strict argv parser: global flags are valid before or after the verb, every other flag
// belongs to the verb, and anything unknown is a usage error (exit 2).

export type OptKind = 'bool' | 'value' | 'multi';
export type OptSpec = Record<string, { kind: OptKind; short?: string }>;
export type OptValues = Record<string, string | boolean | string[] | undefined>;

export class UsageError extends Error {}

export const GLOBAL_OPTS: OptSpec = {
  // Repeatable only for `tma collector`, which follows several servers; one-shot verbs take one.
  'socket-name': { kind: 'multi', short: 'L' },
  'socket-path': { kind: 'multi', short: 'S' },
  config: { kind: 'value' },
  'manifest-dir': { kind: 'value' },
  hub: { kind: 'value' },
  'token-file': { kind: 'value' },
  'debug-timing': { kind: 'bool' },
  // Read by the long-running verbs (hub, collector); the others log nothing.
  'log-level': { kind: 'value' },
  help: { kind: 'bool', short: 'h' },
  version: { kind: 'bool', short: 'V' },
};

export const SELECTOR_OPTS: OptSpec = {
  session: { kind: 'value' },
  repo: { kind: 'value' },
  branch: { kind: 'value' },
  agent: { kind: 'value' },
  state: { kind: 'value' },
  host: { kind: 'value' },
};

/** `status`'s own flags (cli/main.ts; the quick path in cli/status-fast.ts parses with them too). */
export const STATUS_OPTS: OptSpec = { format: { kind: 'value' }, ...SELECTOR_OPTS };

export interface Parsed {
  verb: string | null;
  globals: OptValues;
  opts: OptValues;
  positionals: string[];
}

function lookup(spec: OptSpec, token: string): [string, OptSpec[string]] | null {
  if (token.startsWith('--')) {
    const name = token.slice(2);
    return spec[name] ? [name, spec[name]] : null;
  }
  const short = token.slice(1);
  for (const [name, s] of Object.entries(spec)) if (s.short === short) return [name, s];
  return null;
}

function store(into: OptValues, name: string, kind: OptKind, value: string | true) {
  if (kind === 'multi') {
    const list = (into[name] as string[] | undefined) ?? [];
    list.push(value as string);
    into[name] = list;
  } else if (into[name] !== undefined && kind === 'value') {
    throw new UsageError(`--${name} given more than once`);
  } else {
    into[name] = value;
  }
}

export function parseArgv(argv: readonly string[], verbs: Record<string, OptSpec>): Parsed {
  const out: Parsed = { verb: null, globals: {}, opts: {}, positionals: [] };
  let onlyPositionals = false;
  for (let i = 0; i < argv.length; i++) {
    let tok = argv[i]!;
    if (onlyPositionals || tok === '-' || !tok.startsWith('-')) {
      if (out.verb === null) {
        if (!verbs[tok]) throw new UsageError(`unknown command "${tok}"`);
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
    const verbSpec = out.verb ? verbs[out.verb]! : {};
    const hit = lookup(GLOBAL_OPTS, tok) ?? lookup(verbSpec, tok);
    if (!hit) throw new UsageError(out.verb ? `unexpected flag ${tok} for "${out.verb}"` : `unexpected flag ${tok}`);
    const [name, spec] = hit;
    const target = GLOBAL_OPTS[name] && lookup(GLOBAL_OPTS, tok) ? out.globals : out.opts;
    if (spec.kind === 'bool') {
      if (inline !== undefined) throw new UsageError(`--${name} takes no value`);
      store(target, name, 'bool', true);
      continue;
    }
    const value = inline ?? argv[++i];
    if (value === undefined) throw new UsageError(`--${name} needs a value`);
    store(target, name, spec.kind, value);
  }
  return out;
}

export const str = (v: OptValues[string]): string | undefined => (typeof v === 'string' ? v : undefined);
export const flag = (v: OptValues[string]): boolean => v === true;
