// Raw terminal input to key names (pure): a printable character stands for itself; the rest are
// named. One read may carry several keys (a paste, keys typed while we were busy).

const SEQ: [string, string][] = [
  ['\x1b[A', 'up'],
  ['\x1b[B', 'down'],
  ['\x1bOA', 'up'],
  ['\x1bOB', 'down'],
  ['\x1b[C', 'right'],
  ['\x1b[D', 'left'],
  ['\x1bOC', 'right'],
  ['\x1bOD', 'left'],
];

export function parseKeys(input: string): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < input.length) {
    const seq = SEQ.find(([s]) => input.startsWith(s, i));
    if (seq) {
      out.push(seq[1]);
      i += seq[0].length;
      continue;
    }
    const ch = input[i]!;
    if (ch === '\x1b') {
      // Another escape sequence we do not use: skip it whole rather than read its letters as keys.
      const m = /^\x1b(\[[0-9;?]*[ -/]*[@-~]|O.)/.exec(input.slice(i));
      if (m) {
        i += m[0].length;
        continue;
      }
      out.push('esc');
      i += 1;
      continue;
    }
    i += 1;
    if (ch === '\r' || ch === '\n') out.push('enter');
    else if (ch === '\t') out.push('tab');
    else if (ch === '\x7f' || ch === '\b') out.push('backspace');
    else if (ch === '\x03') out.push('ctrl-c');
    else if (ch === '\x0e') out.push('ctrl-n');
    else if (ch === '\x10') out.push('ctrl-p');
    else if (ch >= ' ') out.push(ch);
  }
  return out;
}
