// Manifests carry patterns in the Rust `regex` dialect (the reference tool's), so a user's
// manifest written for it behaves the same here. JavaScript's `u` mode is close but not equal:
// this module rewrites the differences into JS syntax with the same meaning, and refuses what
// Rust itself would refuse (look-around, backreferences) so a pattern is valid in both or neither.

// Rust's `\w` is Unicode-aware; JS's is ASCII even under `u`, so it is spelled out.
const WORD = String.raw`\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\p{Join_Control}`;
const WORD_BOUNDARY = String.raw`(?:(?<=[${WORD}])(?![${WORD}])|(?<![${WORD}])(?=[${WORD}]))`;
const NOT_WORD_BOUNDARY = String.raw`(?:(?<=[${WORD}])(?=[${WORD}])|(?<![${WORD}])(?![${WORD}]))`;

// ASCII classes Rust accepts inside brackets as `[:name:]`.
const POSIX: Record<string, string> = {
  alnum: '0-9A-Za-z',
  alpha: 'A-Za-z',
  ascii: String.raw`\x00-\x7F`,
  blank: String.raw`\t `,
  cntrl: String.raw`\x00-\x1F\x7F`,
  digit: '0-9',
  graph: '!-~',
  lower: 'a-z',
  print: ' -~',
  punct: String.raw`!-\/:-@\[-\x60{-~`,
  space: String.raw`\t\n\x0B\f\r `,
  upper: 'A-Z',
  word: '0-9A-Za-z_',
  xdigit: '0-9A-Fa-f',
};

const SIMPLE_ESCAPES = new Set(['n', 't', 'r', 'f', 'v']);

class Unsupported extends Error {}

/** Rust takes a bare script name (`\p{Greek}`); JS wants it qualified. */
function propertyName(name: string): string {
  if (validProperty(name)) return name;
  const qualified = `Script_Extensions=${name}`;
  return validProperty(qualified) ? qualified : name;
}

function validProperty(name: string): boolean {
  try {
    new RegExp(`\\p{${name}}`, 'u');
    return true;
  } catch {
    return false;
  }
}

function hexEscape(ch: string): string {
  return '\\x' + ch.charCodeAt(0).toString(16).padStart(2, '0');
}

/** Translate the pattern body; `dotAll` says whether `.` may cross a newline. */
function translate(chars: string[], dotAll: boolean): string {
  let out = '';
  let inClass = false;
  let classStart = false;
  let i = 0;
  const at = (k: number): string => chars[k] ?? '';

  while (i < chars.length) {
    const c = at(i);

    if (c === '\\') {
      const d = at(i + 1);
      if (d === '') throw new Unsupported('pattern ends with a lone backslash');
      i += 2;
      classStart = false;
      if (d === 'x' || d === 'u' || d === 'U') {
        if (at(i) === '{') {
          let j = i + 1;
          let hex = '';
          while (j < chars.length && at(j) !== '}') hex += at(j++);
          if (at(j) !== '}' || !/^[0-9A-Fa-f]{1,8}$/.test(hex)) {
            throw new Unsupported(`malformed \\${d}{…} escape`);
          }
          out += `\\u{${hex}}`;
          i = j + 1;
        } else {
          const width = d === 'x' ? 2 : d === 'u' ? 4 : 8;
          const hex = chars.slice(i, i + width).join('');
          if (hex.length !== width || !/^[0-9A-Fa-f]+$/.test(hex)) {
            throw new Unsupported(`malformed \\${d} escape`);
          }
          out += `\\u{${hex}}`;
          i += width;
        }
      } else if (d === 'd') out += String.raw`\p{Nd}`;
      else if (d === 'D') out += String.raw`\P{Nd}`;
      else if (d === 's') out += String.raw`\p{White_Space}`;
      else if (d === 'S') out += String.raw`\P{White_Space}`;
      else if (d === 'w') out += inClass ? WORD : `[${WORD}]`;
      else if (d === 'W') {
        if (inClass) throw new Unsupported('\\W inside a character class is not supported');
        out += `[^${WORD}]`;
      } else if (d === 'b' || d === 'B' || d === 'A' || d === 'z') {
        if (inClass) throw new Unsupported(`\\${d} is not allowed inside a character class`);
        if (d === 'b') out += WORD_BOUNDARY;
        else if (d === 'B') out += NOT_WORD_BOUNDARY;
        // Text ends regardless of any (?m): nothing before / nothing after.
        else if (d === 'A') out += '(?<![^])';
        else out += '(?![^])';
      } else if (d === 'p' || d === 'P') {
        if (at(i) === '{') {
          let j = i + 1;
          let name = '';
          while (j < chars.length && at(j) !== '}') name += at(j++);
          if (at(j) !== '}' || name === '') throw new Unsupported(`malformed \\${d}{…} class`);
          out += `\\${d}{${propertyName(name)}}`;
          i = j + 1;
        } else {
          const letter = at(i);
          if (!/^[A-Za-z]$/.test(letter)) throw new Unsupported(`malformed \\${d} class`);
          out += `\\${d}{${letter}}`;
          i += 1;
        }
      } else if (d === 'a') out += String.raw`\x07`;
      else if (SIMPLE_ESCAPES.has(d)) out += '\\' + d;
      else if (/^[0-9]$/.test(d)) throw new Unsupported('backreferences and octal escapes are not supported');
      else if (/^[A-Za-z]$/.test(d)) throw new Unsupported(`unknown escape \\${d}`);
      // Rust lets any ASCII punctuation be escaped; JS `u` mode allows only a few, so the
      // literal is spelled as a hex escape, which both read the same way.
      else if (d.length === 1 && d.charCodeAt(0) < 0x80) out += hexEscape(d);
      else out += d;
      continue;
    }

    if (inClass) {
      if (c === ']') {
        // A `]` right after `[` or `[^` is a literal in Rust; in JS it would close the class.
        out += classStart ? '\\]' : ']';
        if (!classStart) inClass = false;
      } else if (c === '[') {
        const rest = chars.slice(i).join('');
        const m = /^\[:(\^?)([a-z]+):\]/.exec(rest);
        if (!m) throw new Unsupported('nested character classes are not supported');
        const body = POSIX[m[2] ?? ''];
        if (body === undefined) throw new Unsupported(`unknown POSIX class [:${m[2]}:]`);
        if (m[1] === '^') throw new Unsupported('negated POSIX classes are not supported');
        out += body;
        i += Array.from(m[0]).length;
        classStart = false;
        continue;
      } else if ((c === '&' || c === '~' || c === '-') && at(i + 1) === c) {
        throw new Unsupported(`class set operator ${c}${c} is not supported`);
      } else {
        out += c;
      }
      classStart = false;
      i += 1;
      continue;
    }

    if (c === '[') {
      inClass = true;
      classStart = true;
      out += '[';
      if (at(i + 1) === '^') {
        out += '^';
        i += 1;
      }
      i += 1;
      continue;
    }
    if (c === '.') {
      // Rust's `.` stops only at `\n`; JS's also stops at `\r`, U+2028 and U+2029.
      out += dotAll ? '[^]' : '[^\\n]';
      i += 1;
      continue;
    }
    if (c === '(' && at(i + 1) === '?') {
      const n2 = at(i + 2);
      const n3 = at(i + 3);
      if (n2 === ':') {
        out += '(?:';
        i += 3;
      } else if (n2 === 'P' && n3 === '<') {
        out += '(?<';
        i += 4;
      } else if (n2 === '<' && n3 !== '=' && n3 !== '!') {
        out += '(?<';
        i += 3;
      } else if (n2 === '=' || n2 === '!' || n2 === '<') {
        throw new Unsupported('look-around is not supported');
      } else {
        throw new Unsupported('inline flags are only supported at the start of the pattern');
      }
      continue;
    }
    out += c;
    i += 1;
  }
  if (inClass) throw new Unsupported('unclosed character class');
  return out;
}

/**
 * Compile a Rust-dialect pattern. No multiline flag is added, so `^`/`$` are the text's ends
 * unless the pattern itself starts with `(?m)`. Throws an Error whose message starts with
 * `invalid regex`.
 */
export function compileRustRegex(source: string): RegExp {
  let flags = 'u';
  let body = source;
  const lead = /^\(\?([A-Za-z]+)\)/.exec(source);
  if (lead) {
    for (const f of lead[1] ?? '') {
      if (f === 'i' || f === 'm' || f === 's') {
        if (!flags.includes(f)) flags += f;
      } else if (f !== 'u') {
        throw new Error(`invalid regex ${JSON.stringify(source)}: inline flag "${f}" is not supported`);
      }
    }
    body = source.slice(lead[0].length);
  }
  let translated: string;
  try {
    translated = translate(Array.from(body), flags.includes('s'));
  } catch (e) {
    if (e instanceof Unsupported) throw new Error(`invalid regex ${JSON.stringify(source)}: ${e.message}`);
    throw e;
  }
  // The `s` flag is not forwarded: `.` was already rewritten to say exactly what it matches.
  const jsFlags = flags.replace('s', '');
  try {
    return new RegExp(translated, jsFlags);
  } catch (e) {
    const why = e instanceof Error ? e.message.replace(/^Invalid regular expression: /, '') : String(e);
    throw new Error(`invalid regex ${JSON.stringify(source)}: ${why}`);
  }
}
