// A line diff rendered as unified hunks (3 lines of context, git-style headers), every line
// indented two spaces so it reads as part of the installer's message.

type Op = { k: ' ' | '-' | '+'; line: string };

function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** Longest common subsequence over lines; config files are small enough for the plain table. */
function ops(a: string[], b: string[]): Op[] {
  const n = a.length;
  const m = b.length;
  const w = m + 1;
  const lcs = new Uint32Array((n + 1) * w);
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i * w + j] = a[i] === b[j] ? lcs[(i + 1) * w + j + 1]! + 1 : Math.max(lcs[(i + 1) * w + j]!, lcs[i * w + j + 1]!);
    }
  }
  const out: Op[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) {
      out.push({ k: ' ', line: a[i++]! });
      j++;
    } else if (j < m && (i === n || lcs[i * w + j + 1]! >= lcs[(i + 1) * w + j]!)) {
      out.push({ k: '+', line: b[j++]! });
    } else {
      out.push({ k: '-', line: a[i++]! });
    }
  }
  return out;
}

export interface DiffColors {
  header: (s: string) => string;
  del: (s: string) => string;
  ins: (s: string) => string;
}

const PLAIN: DiffColors = { header: (s) => s, del: (s) => s, ins: (s) => s };

export function unifiedDiff(before: string, after: string, colors: DiffColors = PLAIN, context = 3): string {
  const list = ops(splitLines(before), splitLines(after));
  const changed = list.map((o, idx) => (o.k !== ' ' ? idx : -1)).filter((x) => x >= 0);
  if (changed.length === 0) return '';
  const out: string[] = [];
  let h = 0;
  while (h < changed.length) {
    let start = Math.max(0, changed[h]! - context);
    let end = Math.min(list.length, changed[h]! + context + 1);
    while (h + 1 < changed.length && changed[h + 1]! - context <= end) {
      h++;
      end = Math.min(list.length, changed[h]! + context + 1);
    }
    h++;
    // Line numbers of the hunk start on each side.
    let aLine = 1;
    let bLine = 1;
    for (let k = 0; k < start; k++) {
      if (list[k]!.k !== '+') aLine++;
      if (list[k]!.k !== '-') bLine++;
    }
    const slice = list.slice(start, end);
    const aLen = slice.filter((o) => o.k !== '+').length;
    const bLen = slice.filter((o) => o.k !== '-').length;
    out.push(colors.header(`  @@ -${aLen ? aLine : aLine - 1},${aLen} +${bLen ? bLine : bLine - 1},${bLen} @@`));
    for (const o of slice) {
      const text = `  ${o.k}${o.line}`;
      out.push(o.k === '-' ? colors.del(text) : o.k === '+' ? colors.ins(text) : text);
    }
    start = end;
  }
  return `${out.join('\n')}\n`;
}
