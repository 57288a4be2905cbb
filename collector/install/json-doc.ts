// Strict JSON that keeps what JSON.parse loses: object key order (integer-like keys included) and
// each number's source text. Config edits re-serialize through it, so a canonical file (2-space
// indent, the layout JSON.stringify(x, null, 2) gives) comes back byte for byte.

export type JsonValue =
  | { t: 'obj'; entries: [string, JsonValue][] }
  | { t: 'arr'; items: JsonValue[] }
  | { t: 'str'; v: string }
  | { t: 'num'; raw: string }
  | { t: 'lit'; raw: 'true' | 'false' | 'null' };

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
    const c = text[i];
    if (c === '{') {
      i++;
      const entries: [string, JsonValue][] = [];
      const index = new Map<string, number>();
      ws();
      if (text[i] === '}') {
        i++;
        return { t: 'obj', entries };
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
        const seen = index.get(k);
        if (seen === undefined) index.set(k, entries.push([k, v]) - 1);
        else if (duplicates === 'last') entries[seen] = [k, v];
        else {
          i = keyAt;
          fail(`duplicate key ${JSON.stringify(k).slice(0, 80)} (the agent reads only the last one)`);
        }
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === '}') {
          i++;
          return { t: 'obj', entries };
        }
        fail('expected "," or "}"');
      }
    }
    if (c === '[') {
      i++;
      const items: JsonValue[] = [];
      ws();
      if (text[i] === ']') {
        i++;
        return { t: 'arr', items };
      }
      for (;;) {
        items.push(value(depth + 1));
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === ']') {
          i++;
          return { t: 'arr', items };
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

export function serializeJson(v: JsonValue): string {
  return `${ser(v, '')}\n`;
}

function ser(v: JsonValue, indent: string): string {
  const inner = `${indent}  `;
  switch (v.t) {
    case 'str':
      return JSON.stringify(v.v);
    case 'num':
    case 'lit':
      return v.raw;
    case 'arr':
      if (v.items.length === 0) return '[]';
      return `[\n${v.items.map((x) => inner + ser(x, inner)).join(',\n')}\n${indent}]`;
    case 'obj':
      if (v.entries.length === 0) return '{}';
      return `{\n${v.entries.map(([k, x]) => `${inner}${JSON.stringify(k)}: ${ser(x, inner)}`).join(',\n')}\n${indent}}`;
  }
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
