// Is the option a key would pick the one the dialog highlights? Pure. Some dialogs take Enter on
// whatever option the cursor is on and mark that option only by colour (OpenCode draws it on an
// accent background, its row-mates on the panel's), so the plain capture cannot tell; this reads
// a capture taken with escapes (`capture-pane -e`) instead.

/** The parts of the SGR state that can mark a selection: the background and reverse video. */
interface Mark {
  bg: string;
  reverse: boolean;
}

interface Cell {
  ch: string;
  mark: Mark;
}

const SGR = /^\x1b\[([0-9;:]*)m/;
const OTHER_ESCAPE = /^\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])/;

/** Apply one SGR parameter list to the state; colours other than the background are skipped. */
function applySgr(params: string, m: Mark): Mark {
  const p = params === '' ? [0] : params.split(/[;:]/).map((x) => (x === '' ? 0 : Number(x)));
  let { bg, reverse } = m;
  for (let i = 0; i < p.length; i++) {
    const n = p[i]!;
    if (n === 0) {
      bg = 'default';
      reverse = false;
    } else if (n === 7) reverse = true;
    else if (n === 27) reverse = false;
    else if ((n >= 40 && n <= 47) || (n >= 100 && n <= 107)) bg = String(n);
    else if (n === 49) bg = 'default';
    else if (n === 38 || n === 48 || n === 58) {
      const kind = p[i + 1];
      const width = kind === 5 ? 2 : kind === 2 ? 4 : 1;
      if (n === 48) bg = p.slice(i + 1, i + 1 + width).join(';');
      i += width;
    }
  }
  return { bg, reverse };
}

/** One captured line as cells, each with the mark it was drawn with. The state carries over lines. */
function cellsOf(line: string, start: Mark): { cells: Cell[]; end: Mark } {
  const cells: Cell[] = [];
  let mark = start;
  for (let i = 0; i < line.length;) {
    if (line[i] === '\x1b') {
      const rest = line.slice(i);
      const sgr = SGR.exec(rest);
      if (sgr) {
        mark = applySgr(sgr[1]!, mark);
        i += sgr[0].length;
        continue;
      }
      const other = OTHER_ESCAPE.exec(rest);
      i += other ? other[0].length : 1;
      continue;
    }
    const cp = line.codePointAt(i)!;
    const ch = String.fromCodePoint(cp);
    cells.push({ ch, mark });
    i += ch.length;
  }
  return { cells, end: mark };
}

const same = (a: Mark, b: Mark) => a.bg === b.bg && a.reverse === b.reverse;

/**
 * Whether `option` is drawn highlighted on the last line that shows it: its mark differs from the
 * mark of every other word on that line. A line with no other word, or an option drawn like one
 * of its neighbours, is not highlighted: when in doubt, the key is not sent.
 */
export function optionHighlighted(escaped: string, option: string): boolean {
  let state: Mark = { bg: 'default', reverse: false };
  let found: Cell[] | null = null;
  let at = -1;
  for (const line of escaped.split('\n')) {
    const { cells, end } = cellsOf(line, state);
    state = end;
    const text = cells.map((c) => c.ch).join('');
    const i = text.lastIndexOf(option);
    if (i >= 0) {
      found = cells;
      // Code units to cells: every cell holds one code point.
      at = [...text.slice(0, i)].length;
    }
  }
  if (found === null) return false;
  const optionEnd = at + [...option].length;
  const mark = found[at]!.mark;
  let others = 0;
  for (let i = 0; i < found.length; i++) {
    const starts = found[i]!.ch.trim() !== '' && (i === 0 || found[i - 1]!.ch.trim() === '');
    if (!starts || (i >= at && i < optionEnd)) continue;
    others++;
    if (same(found[i]!.mark, mark)) return false;
  }
  return others > 0;
}
