// Strict JSON that keeps what JSON.parse loses: object key order (integer-like keys included),
// each number's source text, and the file's own layout. A parsed value remembers where it came
// from; serializing an edited document writes every value nobody touched as the bytes it was
// read from, and only what an edit added in a layout of its own (indented like its neighbours),
// so a hand-formatted settings file keeps its indentation, blank lines and spacing.

/** Where a parsed value came from. Containers also keep the text around each member. */
interface Src {
  text: string;
  start: number;
  end: number;
  /** Containers: what precedes each member (for objects: the whitespace, the key as written, the colon), by key or index. */
  leads?: Map<string | JsonValue, string>;
  /** Containers: what follows each member up to its comma. */
  afters?: Map<string | JsonValue, string>;
  /** Containers: what follows the last member up to the closing bracket (the inside, when empty). */
  close?: string;
}

export type JsonValue = (
  | { t: 'obj'; entries: [string, JsonValue][] }
  | { t: 'arr'; items: JsonValue[] }
  | { t: 'str'; v: string }
  | { t: 'num'; raw: string }
  | { t: 'lit'; raw: 'true' | 'false' | 'null' }
) & { src?: Src };

export class JsonSyntaxError extends Error {}

const MAX_DEPTH = 128;

/**
 * `duplicates`: 'refuse' (an edit: which of two values would the agent keep, and where would the
 * edit go?) or 'last' (reading as the agent does: JSON.parse keeps the last value, at the place
 * of the first).
 */
export function parseJson(text: string, duplicates: 'refuse' | 'last' = 'refuse'): JsonValue {
  let i = 0;
  const fail = (what: string): never => {
    const line = text.slice(0, i).split('\n').length;
    throw new JsonSyntaxError(`${what} at line ${line}`);
  };
  const ws = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++;
  };
  const str = (): string => {
    const start = i;
    i++;
    for (;;) {
      const c = text[i];
      if (c === undefined) fail('unterminated string');
      if (c === '"') break;
      if (c === '\\') i += 2;
      else if (c! < ' ') fail('control character in string');
      else i++;
    }
    i++;
    try {
      return JSON.parse(text.slice(start, i)) as string;
    } catch {
      return fail('bad string escape');
    }
  };
  const value = (depth: number): JsonValue => {
    if (depth > MAX_DEPTH) fail('nesting too deep');
    ws();
    const start = i;
    const v = bare(depth);
    v.src = { ...v.src, text, start, end: i };
    return v;
  };
  const bare = (depth: number): JsonValue => {
    const c = text[i];
    if (c === '{') {
      i++;
      const entries: [string, JsonValue][] = [];
      const index = new Map<string, number>();
      const src = { text, start: 0, end: 0, leads: new Map<string | JsonValue, string>(), afters: new Map<string | JsonValue, string>(), close: '' };
      let from = i;
      ws();
      if (text[i] === '}') {
        src.close = text.slice(from, i);
        i++;
        return { t: 'obj', entries, src };
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail('expected a key');
        const keyAt = i;
        const k = str();
        ws();
        if (text[i] !== ':') fail('expected ":"');
        i++;
        const v = value(depth + 1);
        src.leads.set(k, text.slice(from, v.src!.start));
        const seen = index.get(k);
        if (seen === undefined) index.set(k, entries.push([k, v]) - 1);
        else if (duplicates === 'last') entries[seen] = [k, v];
        else {
          i = keyAt;
          fail(`duplicate key ${JSON.stringify(k).slice(0, 80)} (the agent reads only the last one)`);
        }
        const end = i;
        ws();
        if (text[i] === ',') {
          src.afters.set(k, text.slice(end, i));
          from = ++i;
          continue;
        }
        if (text[i] === '}') {
          src.close = text.slice(end, i);
          i++;
          return { t: 'obj', entries, src };
        }
        fail('expected "," or "}"');
      }
    }
    if (c === '[') {
      i++;
      const items: JsonValue[] = [];
      const src = { text, start: 0, end: 0, leads: new Map<string | JsonValue, string>(), afters: new Map<string | JsonValue, string>(), close: '' };
      let from = i;
      ws();
      if (text[i] === ']') {
        src.close = text.slice(from, i);
        i++;
        return { t: 'arr', items, src };
      }
      for (;;) {
        const v = value(depth + 1);
        items.push(v);
        src.leads.set(v, text.slice(from, v.src!.start));
        const end = i;
        ws();
        if (text[i] === ',') {
          src.afters.set(v, text.slice(end, i));
          from = ++i;
          continue;
        }
        if (text[i] === ']') {
          src.close = text.slice(end, i);
          i++;
          return { t: 'arr', items, src };
        }
        fail('expected "," or "]"');
      }
    }
    if (c === '"') return { t: 'str', v: str() };
    const num = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (num) {
      i += num[0].length;
      return { t: 'num', raw: num[0] };
    }
    for (const lit of ['true', 'false', 'null'] as const) {
      if (text.startsWith(lit, i)) {
        i += lit.length;
        return { t: 'lit', raw: lit };
      }
    }
    return fail('unexpected character');
  };
  const v = value(0);
  ws();
  if (i < text.length) fail('trailing characters');
  return v;
}

/**
 * The document as text. A parsed document keeps the bytes around its top value and of every value
 * left as it was; only what an edit changed is written anew (see emit).
 */
export function serializeJson(v: JsonValue): string {
  if (!v.src) return `${ser(v, '', '  ')}\n`;
  const { text, start, end } = v.src;
  return text.slice(0, start) + emit(v, indentUnit(v)) + text.slice(end);
}

/** The canonical layout (2-space indent), whatever the source looked like: for comparing documents. */
export function canonicalJson(v: JsonValue): string {
  return `${ser(v, '', '  ')}\n`;
}

/** Fresh values, in the canonical layout at `indent`, one `unit` deeper per level. */
function ser(v: JsonValue, indent: string, unit: string): string {
  const inner = indent + unit;
  switch (v.t) {
    case 'str':
      return JSON.stringify(v.v);
    case 'num':
    case 'lit':
      return v.raw;
    case 'arr':
      if (v.items.length === 0) return '[]';
      return `[\n${v.items.map((x) => inner + emit(x, unit, inner)).join(',\n')}\n${indent}]`;
    case 'obj':
      if (v.entries.length === 0) return '{}';
      return `{\n${v.entries.map(([k, x]) => `${inner}${JSON.stringify(k)}: ${emit(x, unit, inner)}`).join(',\n')}\n${indent}}`;
  }
}

/** A fresh value on one line, spaced as JSON.stringify's pretty form spaces it. */
function inline(v: JsonValue): string {
  if (v.src) return emit(v, '  ');
  switch (v.t) {
    case 'str':
      return JSON.stringify(v.v);
    case 'num':
    case 'lit':
      return v.raw;
    case 'arr':
      return `[${v.items.map(inline).join(', ')}]`;
    case 'obj':
      return `{${v.entries.map(([k, x]) => `${JSON.stringify(k)}: ${inline(x)}`).join(', ')}}`;
  }
}

/** The leading whitespace of the line `at` is on. */
function lineIndent(text: string, at: number): string {
  const from = text.lastIndexOf('\n', at - 1) + 1;
  return /^[ \t]*/.exec(text.slice(from, at))![0];
}

/** One level of the file's indentation: how far the top value's first member sits in from it, else 2 spaces. */
function indentUnit(root: JsonValue): string {
  const src = root.src!;
  const first = root.t === 'obj' ? root.entries[0]?.[0] : root.t === 'arr' ? root.items[0] : undefined;
  const lead = first === undefined ? undefined : src.leads?.get(first);
  if (lead === undefined || !lead.includes('\n')) return '  ';
  const own = lineIndent(src.text, src.start);
  const member = /^[ \t]*/.exec(lead.slice(lead.lastIndexOf('\n') + 1))![0];
  return member.startsWith(own) && member.length > own.length ? member.slice(own.length) : '  ';
}

/**
 * A value as text: as it was read when it has a source and nothing in it changed; a container
 * whose members changed keeps the text around every member it still has and gives a new member
 * the lead of the member before it (or, in a container that was empty, its line's indentation
 * one `unit` in). `indent` is where a value without a source starts its lines.
 */
function emit(v: JsonValue, unit: string, indent?: string): string {
  const src = v.src;
  if (!src) return ser(v, indent ?? '', unit);
  if (v.t !== 'obj' && v.t !== 'arr') {
    // A leaf's bytes stand for its value only while the value is the one read.
    const raw = src.text.slice(src.start, src.end);
    const same = v.t === 'str' ? (JSON.parse(raw) as string) === v.v : raw === v.raw;
    return same ? raw : ser(v, indent ?? '', unit);
  }
  const members: [string | JsonValue, string, JsonValue][] =
    v.t === 'obj' ? v.entries.map(([k, x]) => [k, JSON.stringify(k), x]) : v.items.map((x) => [x, '', x]);
  const [open, shut] = v.t === 'obj' ? ['{', '}'] : ['[', ']'];
  if (members.length === 0) return src.leads!.size === 0 ? src.text.slice(src.start, src.end) : `${open}${shut}`;
  const own = lineIndent(src.text, src.start);
  let prevLead: string | undefined;
  const parts = members.map(([id, key, x], n) => {
    let lead = src.leads!.get(id);
    if (lead === undefined) {
      // A new member: laid out like the one before it, or the first one, or one level in.
      const like = prevLead ?? [...src.leads!.values()][0];
      const space = like === undefined ? `\n${own}${unit}` : /^\s*/.exec(like)![0];
      const colon = v.t === 'obj' ? (like === undefined ? ': ' : (/"\s*(:\s*)$/.exec(like)?.[1] ?? ': ')) : '';
      lead = space + key + colon;
    }
    prevLead = lead;
    const after = n < members.length - 1 ? `${src.afters!.get(id) ?? ''},` : '';
    // A container written on one line gets a new member on that line too.
    if (!lead.includes('\n') && src.leads!.size > 0) return lead + (x.src ? emit(x, unit) : inline(x)) + after;
    const at = lead.includes('\n') ? lead.slice(lead.lastIndexOf('\n') + 1).replace(/[^ \t].*$/, '') : `${own}${unit}`;
    return lead + emit(x, unit, at) + after;
  });
  const close = src.leads!.size === 0 ? `\n${own}` : src.close!;
  return open + parts.join('') + close + shut;
}

export const jstr = (v: string): JsonValue => ({ t: 'str', v });
export const jobj = (entries: [string, JsonValue][]): JsonValue => ({ t: 'obj', entries });
export const jarr = (items: JsonValue[]): JsonValue => ({ t: 'arr', items });

export function getKey(o: JsonValue, key: string): JsonValue | undefined {
  return o.t === 'obj' ? o.entries.find(([k]) => k === key)?.[1] : undefined;
}

/** Replace a key's value in place, or append the key at the end. */
export function setKey(o: Extract<JsonValue, { t: 'obj' }>, key: string, value: JsonValue): void {
  const at = o.entries.findIndex(([k]) => k === key);
  if (at >= 0) o.entries[at] = [key, value];
  else o.entries.push([key, value]);
}

export function deleteKey(o: Extract<JsonValue, { t: 'obj' }>, key: string): void {
  o.entries = o.entries.filter(([k]) => k !== key);
}
